#include "report/lab_check.hpp"

#include <cmath>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <thread>

#include "report/lab_sheet.hpp"
#include "run/run_scenario.hpp"
#include "scenario/scenario.hpp"
#include "util/atomic_file.hpp"
#include "util/child_process.hpp"
#include "util/csv.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/suggest.hpp"

using nlohmann::json;

namespace collsim {
namespace {

using Metrics = std::map<std::string, json>;  // run -> its metrics (or {"error": ...} when it failed)

std::string describe_variant(const LabVariant& v) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : v.values) parts.push_back(fmt::format("{} = {}", name, value.is_string() ? value.get<std::string>() : value.dump()));
  return join(parts, ", ");
}

// Every run of the sheet for one student, each in its own process (one engine per process).
Metrics run_all(const LabSheet& sheet, const LabVariant& variant, int jobs) {
  std::vector<Scenario> scenarios;
  for (const auto& run : sheet.run_order)
    scenarios.push_back(parse_scenario(sheet.run_document(run, variant), COLLSIM_SOURCE_DIR));
  Metrics metrics;
  run_children(
      scenarios.size(), jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())),
      [&](size_t i) { return run_metrics(scenarios[i]).dump(); },
      [&](size_t i, const ChildOutcome& outcome, double) {
        metrics[sheet.run_order[i]] =
            outcome.exit_code == 0 ? json::parse(outcome.output)
                                   : json{{"error", outcome.output.empty() ? fmt::format("exit status {}", outcome.exit_code)
                                                                           : outcome.output}};
      },
      [] { return false; });
  return metrics;
}

struct Graded {
  std::string status;  // right, WRONG, missing
  std::string detail;
};

Graded grade_question(const LabSheet& sheet, const LabQuestion& q, const LabVariant& variant, const Metrics& metrics,
                      const json& answers, bool reveal) {
  for (const auto& [run, values] : metrics) {
    if (q.value.find(run + ".") == std::string::npos) continue;
    if (values.contains("error"))
      return {"WRONG", fmt::format("the run '{}' failed: {}", run, values["error"].get<std::string>())};
    // a wrong result's time is no measurement: only its flag grades it (a prediction, made
    // from the model, does not depend on the run)
    if (q.kind != "predict" && values.value("verified", true) == false &&
        q.value.find(run + ".verified") == std::string::npos)
      return {"WRONG", fmt::format("the run '{}' gave a wrong result (verification failed): its figures are not graded", run)};
  }
  const double expected = sheet.evaluate(q.value, variant, metrics, "questions." + q.id + ".value");
  const std::string shown = reveal ? fmt::format("; expected {}", format_answer(expected, q.unit)) : "";
  if (q.kind == "check") {
    const bool ok = q.expect ? (expected != 0) == *q.expect : expected <= *q.at_most * (1 + 1e-12);
    const std::string wanted = q.expect ? (*q.expect ? "yes" : "no") : fmt::format("at most {:g}", *q.at_most);
    return {ok ? "right" : "WRONG", fmt::format("{} (wanted {})", format_answer(expected, q.unit), wanted)};
  }
  if (!answers.contains(q.id) || answers[q.id].is_null() || answers[q.id] == "") return {"missing", shown.empty() ? "" : shown.substr(2)};
  double given = 0;
  try {
    given = parse_answer(answers[q.id], q.unit, q.id);
  } catch (const InputError& e) {
    return {"WRONG", std::string("unreadable: ") + e.what() + shown};
  }
  const double off = expected != 0 ? std::fabs(given - expected) / std::fabs(expected) : std::fabs(given);
  const bool ok = off <= q.tolerance * (1 + 1e-9);
  return {ok ? "right" : "WRONG", fmt::format("{}: {:.3g}% off, tolerance {:g}%{}", format_answer(given, q.unit), 100 * off,
                                              100 * q.tolerance, shown)};
}

json read_answers(const std::string& path, const LabSheet& sheet) {
  json document;
  try {
    document = json::parse(read_input_file(path, "answers"));
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("answers: {} is not JSON ({})", path, e.what()));
  }
  if (!document.is_object() || !document.contains("student") || !document["student"].is_string() ||
      document["student"].get<std::string>().empty() || !document.contains("answers") || !document["answers"].is_object())
    throw InputError(fmt::format("answers: {} must be {{\"lab\": \"{}\", \"student\": \"...\", \"answers\": {{...}}}} "
                                 "(collsim check {} --student NAME --template writes one)",
                                 path, sheet.lab, sheet.lab));
  if (document.value("lab", sheet.lab) != sheet.lab)
    throw InputError(fmt::format("answers: {} answers {}, not {}", path, document["lab"].dump(), sheet.lab));
  std::vector<std::string> ids;
  for (const auto& q : sheet.questions)
    if (q.kind != "check") ids.push_back(q.id);
  for (const auto& [id, value] : document["answers"].items())
    if (std::find(ids.begin(), ids.end(), id) == ids.end())
      throw InputError(fmt::format("answers: {}: '{}' is not a question of {}{}; allowed: {}", path, id, sheet.lab,
                                   did_you_mean(id, ids), join(ids)));
  return document;
}

// One answer file: printed question by question; returns the statuses in question order.
std::vector<std::string> grade_file(const LabSheet& sheet, const std::string& path, const CheckRequest& request,
                                    std::map<std::string, Metrics>& cache, std::string& student) {
  const json document = read_answers(path, sheet);
  student = document["student"].get<std::string>();
  const LabVariant variant = sheet.variant(student);
  const std::string key = describe_variant(variant);
  if (!cache.count(key)) cache[key] = run_all(sheet, variant, request.jobs);
  std::cout << fmt::format("{} ({}), student {} ({}): {}\n", sheet.lab, sheet.title, student, path, key);
  std::vector<std::string> statuses;
  size_t right = 0;
  for (const auto& q : sheet.questions) {
    const Graded g = grade_question(sheet, q, variant, cache[key], document["answers"], request.reveal);
    statuses.push_back(g.status);
    right += g.status == "right";
    std::cout << fmt::format("  {:<8} {:<8} {:<8} {}\n", q.id, q.kind, g.status, g.detail);
  }
  std::cout << fmt::format("  {} of {} right\n", right, sheet.questions.size());
  return statuses;
}

int print_sheet(const LabSheet& sheet, const CheckRequest& request) {
  if (request.student.empty()) throw InputError("--student: give the student's name or id (their parameters follow from it)");
  const LabVariant variant = sheet.variant(request.student);
  if (request.template_only) {
    nlohmann::ordered_json answers = nlohmann::ordered_json::object(), document = nlohmann::ordered_json::object();
    for (const auto& q : sheet.questions)
      if (q.kind != "check") answers[q.id] = "";
    document["lab"] = sheet.lab;
    document["student"] = request.student;
    document["answers"] = answers;
    std::cout << document.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{}: {}\nstudent {}: {}\n\nRun:\n", sheet.lab, sheet.title, request.student, describe_variant(variant));
  for (const auto& run : sheet.run_order) std::cout << fmt::format("  {}    # {}\n", sheet.run_command(run, variant), run);
  std::cout << "\nQuestions (answer with a number in SI units or a text with its unit: \"14.39 ms\", \"9.3 GB/s\", \"92.9%\"):\n";
  const Metrics metrics = request.reveal ? run_all(sheet, variant, request.jobs) : Metrics{};
  for (const auto& q : sheet.questions) {
    std::string line = fmt::format("  {:<8} {:<8} {}", q.id, q.kind, q.ask);
    if (q.kind != "check") line += fmt::format(" [{}, within {:g}%]", q.unit, 100 * q.tolerance);
    if (request.reveal) line += " -> " + format_answer(sheet.evaluate(q.value, variant, metrics, q.id), q.unit);
    std::cout << line << "\n";
  }
  std::cout << fmt::format("\nAnswers: collsim check {0} --student {1} --template > answers.json, fill it in, then "
                           "collsim check {0} answers.json\n",
                           sheet.lab, request.student);
  return 0;
}

}  // namespace

int command_check(const CheckRequest& request) {
  const LabSheet sheet = load_lab_sheet(request.lab);
  if (request.answers.empty()) return print_sheet(sheet, request);
  if (!request.csv.empty()) check_output_path(request.csv, "--csv");
  for (const auto& path : request.answers) read_answers(path, sheet);  // every file readable before any run
  std::map<std::string, Metrics> cache;  // runs of one variant, shared by the students who have it
  std::string table = "student,file,lab,right,total";
  for (const auto& q : sheet.questions) table += "," + q.id;
  table += "\n";
  bool all_right = true;
  for (const auto& path : request.answers) {
    std::string student;
    const std::vector<std::string> statuses = grade_file(sheet, path, request, cache, student);
    const long right = std::count(statuses.begin(), statuses.end(), "right");
    all_right = all_right && right == static_cast<long>(statuses.size());
    table += fmt::format("{},{},{},{},{}", quote_csv_cell(student), quote_csv_cell(path), sheet.lab, right, statuses.size());
    for (const auto& status : statuses) table += "," + status;
    table += "\n";
  }
  if (!request.csv.empty()) write_file_atomically(request.csv, table, "--csv");
  return all_right ? 0 : 1;
}

}  // namespace collsim
