#pragma once
// A lab's grading sheet (docs/labs/grading/labN.json, docs/labs/grading.md): the parameters
// that vary from student to student, the runs that measure them, and the questions with
// the expression that computes each answer from those runs and a stated tolerance.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace collsim {

struct LabQuestion {
  std::string id, ask;
  std::string kind;        // "predict" (from a formula), "measure" (read off an output) or "check" (nothing to hand in)
  std::string unit;        // time, bandwidth, size, ratio, count, flag: how an answer's text is read and shown
  std::string value;       // an expression over the runs' metrics and the parameters (LabSheet::evaluate)
  double tolerance = 0;    // relative: |answer - expected| <= tolerance * |expected|
  std::optional<double> at_most;  // checks: the value must not exceed this
  std::optional<bool> expect;     // checks of a flag: the value it must have
};

struct LabRun {
  std::string scenario;  // a scenario file (relative to the repository), or empty: the defaults
  nlohmann::ordered_json set;  // field path -> value, with ${name} standing for a parameter
};

// One student's parameters: the text of each value as written in the sheet, and its number.
struct LabVariant {
  std::string student;
  std::vector<std::pair<std::string, nlohmann::json>> values;  // in the sheet's order
  std::map<std::string, double> numbers;                       // parameters and derived figures
};

struct LabSheet {
  std::string lab, title, path;
  nlohmann::ordered_json parameters;  // name -> list of values, or {"size"|"bandwidth"|"time": list}
  nlohmann::ordered_json derived;     // name -> expression over the parameters
  std::map<std::string, LabRun> runs;
  std::vector<std::string> run_order;
  std::vector<LabQuestion> questions;

  // The parameters of `student`: each picked from its list by a hash of the name, the same
  // on every machine and every run.
  LabVariant variant(const std::string& student) const;
  // A run's scenario document for this variant, and the command line a student types.
  nlohmann::json run_document(const std::string& run, const LabVariant& variant) const;
  std::string run_command(const std::string& run, const LabVariant& variant) const;
  // The value of an expression: numbers, parameters, RUN.METRIC, + - * /, parentheses,
  // ceil(x), log2(x). Errors name the sheet's field.
  double evaluate(const std::string& expression, const LabVariant& variant,
                  const std::map<std::string, nlohmann::json>& metrics, const std::string& field) const;
};

// "lab2" (docs/labs/grading/lab2.json of this collsim's sources) or a sheet's path.
LabSheet load_lab_sheet(const std::string& name);

// An answer as a student writes it: a number (SI units), or text with a unit ("14.39 ms",
// "9.29 GB/s", "92.9%", "64 MiB", "yes"). Errors name `field`.
double parse_answer(const nlohmann::json& answer, const std::string& unit, const std::string& field);
std::string format_answer(double value, const std::string& unit);

}  // namespace collsim
