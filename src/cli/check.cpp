// `collsim check`: a lab's grading (docs/labs/grading.md): a student's sheet, an answers
// template, and answer files graded against values collsim computes by running the lab.
#include <memory>

#include "cli/command.hpp"
#include "cli/validators.hpp"
#include "report/lab_check.hpp"

namespace collsim::cli {

Command add_check_command(CLI::App& app) {
  auto request = std::make_shared<CheckRequest>();
  CLI::App* check = app.add_subcommand(
      "check", "Grade a lab's answer files, or print a student's sheet (their parameters, commands and questions)");
  check->add_option("lab", request->lab, "The lab: lab1 ... (docs/labs/grading/), or a grading sheet's path")->required();
  check->add_option("answers", request->answers,
                    "Answer files (JSON) to grade; exit 0 when every answer is right, 1 otherwise");
  check->add_option("--student", request->student, "Without answer files: whose sheet to print (a name or an id)");
  check->add_flag("--template", request->template_only, "With --student: print an answers file to fill in");
  check->add_flag("--reveal", request->reveal, "Also print the expected values (for instructors)");
  check->add_option("--csv", request->csv, "Also write a gradebook: one row per answer file");
  check->add_option("--jobs,-j", request->jobs, "Runs at once (default: the number of cores)")->check(in_range(1, 1024));
  return {check, [request] { return command_check(*request); }};
}

}  // namespace collsim::cli
