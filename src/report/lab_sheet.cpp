#include "report/lab_sheet.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>

#include "scenario/scenario.hpp"
#include "util/errors.hpp"
#include "util/input_file.hpp"
#include "util/suggest.hpp"
#include "util/units.hpp"

using nlohmann::json;
using nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace collsim {
namespace {

const std::vector<std::string> units{"time", "bandwidth", "size", "ratio", "count", "flag"};
const std::vector<std::string> kinds{"predict", "measure", "check"};

void only_keys(const ordered_json& object, const std::vector<std::string>& keys, const std::string& where) {
  if (!object.is_object()) throw InputError(fmt::format("{}: must be an object", where));
  for (const auto& [key, value] : object.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw InputError(fmt::format("{}.{}: unknown key{}; allowed: {}", where, key, did_you_mean(key, keys), join(keys)));
}

std::string text_of(const ordered_json& object, const char* key, const std::string& where, bool required = true) {
  if (!object.contains(key)) {
    if (required) throw InputError(fmt::format("{}.{}: missing", where, key));
    return "";
  }
  if (!object[key].is_string()) throw InputError(fmt::format("{}.{}: must be a string", where, key));
  return object[key].get<std::string>();
}

// "1%" or "0.01" -> 0.01
double parse_tolerance(const ordered_json& value, const std::string& field) {
  if (value.is_number() && value.get<double>() >= 0) return value.get<double>();
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    try {
      size_t used = 0;
      const double number = std::stod(text, &used);
      if (number >= 0 && text.substr(used) == "%") return number / 100;
    } catch (const std::exception&) {
    }
  }
  throw InputError(fmt::format("{}: '{}' is not a tolerance; allowed: a percentage (\"1%\") or a fraction (0.01)", field,
                               value.dump()));
}

LabQuestion parse_question(const ordered_json& q, const std::string& where) {
  only_keys(q, {"id", "ask", "kind", "unit", "value", "tolerance", "at_most", "expect"}, where);
  LabQuestion question;
  question.id = text_of(q, "id", where);
  question.ask = text_of(q, "ask", where);
  question.kind = text_of(q, "kind", where);
  question.unit = text_of(q, "unit", where);
  question.value = text_of(q, "value", where);
  if (std::find(kinds.begin(), kinds.end(), question.kind) == kinds.end())
    throw InputError(fmt::format("{}.kind: '{}'; allowed: {}", where, question.kind, join(kinds)));
  if (std::find(units.begin(), units.end(), question.unit) == units.end())
    throw InputError(fmt::format("{}.unit: '{}'; allowed: {}", where, question.unit, join(units)));
  if (q.contains("tolerance")) question.tolerance = parse_tolerance(q["tolerance"], where + ".tolerance");
  if (q.contains("at_most")) question.at_most = q["at_most"].get<double>();
  if (q.contains("expect")) question.expect = q["expect"].get<bool>();
  if (question.kind == "check" && !question.at_most && !question.expect)
    throw InputError(fmt::format("{}: a check needs at_most or expect", where));
  if (question.kind != "check" && !q.contains("tolerance"))
    throw InputError(fmt::format("{}.tolerance: missing (the tolerance an answer is graded with)", where));
  return question;
}

// A parameter's value as a number: numbers as they are, typed lists through their unit.
double number_of(const std::string& type, const json& value, const std::string& field) {
  if (value.is_number()) return value.get<double>();
  const std::string text = value.get<std::string>();
  if (type == "size") return parse_size(text, field);
  if (type == "bandwidth") return parse_bandwidth(text, field);
  if (type == "time") return parse_time(text, field);
  throw InputError(fmt::format("{}: '{}' is text: give the list as {{\"size\"|\"bandwidth\"|\"time\": [...]}}", field, text));
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

uint64_t fnv1a(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ULL;
  return hash;
}

std::string value_text(const json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

// A student's parameters as written in the sheet, then the derived figures (a whole number
// as an integer: "workers": "${p}" with p = 2 * g).
std::vector<std::pair<std::string, json>> named_values(const LabVariant& variant) {
  auto values = variant.values;
  for (const auto& [name, number] : variant.numbers) {
    const bool given = std::any_of(values.begin(), values.end(), [&](const auto& v) { return v.first == name; });
    if (!given) values.emplace_back(name, number == std::floor(number) ? json(static_cast<int64_t>(number)) : json(number));
  }
  return values;
}

// ${name} in a JSON value: the whole string "${p}" becomes the parameter's (or derived
// figure's) value (a number stays a number); inside a longer string, its text.
json substitute(const json& value, const LabVariant& variant) {
  if (value.is_object() || value.is_array()) {
    json out = value;
    for (auto& item : out) item = substitute(item, variant);
    return out;
  }
  if (!value.is_string()) return value;
  std::string text = value.get<std::string>();
  const auto values = named_values(variant);
  for (const auto& [name, v] : values)
    if (text == "${" + name + "}") return v;
  for (const auto& [name, v] : values)
    for (size_t at = text.find("${" + name + "}"); at != std::string::npos; at = text.find("${" + name + "}"))
      text.replace(at, name.size() + 3, value_text(v));
  if (text.find("${") != std::string::npos)
    throw InputError(fmt::format("runs: '{}' names a parameter the sheet does not have", text));
  return text;
}

}  // namespace

LabSheet load_lab_sheet(const std::string& name) {
  LabSheet sheet;
  const fs::path folder = fs::path(COLLSIM_SOURCE_DIR) / "docs" / "labs" / "grading";
  sheet.path = name.size() > 5 && name.substr(name.size() - 5) == ".json" ? name : (folder / (name + ".json")).string();
  if (!fs::exists(sheet.path)) {
    std::vector<std::string> labs;
    for (const auto& entry : fs::directory_iterator(folder))
      if (entry.path().extension() == ".json") labs.push_back(entry.path().stem().string());
    std::sort(labs.begin(), labs.end());
    throw InputError(fmt::format("lab: no grading sheet '{}'{}; allowed: {} (or a sheet's path)", name,
                                 did_you_mean(name, labs), join(labs)));
  }
  ordered_json document;
  try {
    document = ordered_json::parse(read_input_file(sheet.path, "lab"));
  } catch (const ordered_json::parse_error& e) {
    throw InputError(fmt::format("lab: {} is not JSON ({})", sheet.path, e.what()));
  }
  only_keys(document, {"lab", "title", "description", "parameters", "derived", "runs", "questions"}, "sheet");
  sheet.lab = text_of(document, "lab", "sheet");
  sheet.title = text_of(document, "title", "sheet");
  sheet.parameters = document.value("parameters", ordered_json::object());
  sheet.derived = document.value("derived", ordered_json::object());
  const ordered_json runs = document.value("runs", ordered_json::object());
  for (const auto& [run, spec] : runs.items()) {
    only_keys(spec, {"scenario", "set"}, "runs." + run);
    sheet.runs[run] = LabRun{text_of(spec, "scenario", "runs." + run, false), spec.value("set", ordered_json::object())};
    sheet.run_order.push_back(run);
  }
  const ordered_json questions = document.value("questions", ordered_json::array());
  for (size_t i = 0; i < questions.size(); ++i) sheet.questions.push_back(parse_question(questions[i], fmt::format("questions[{}]", i)));
  return sheet;
}

LabVariant LabSheet::variant(const std::string& student) const {
  LabVariant v;
  v.student = student;
  const uint64_t hash = fnv1a(lab + "/" + student);
  uint64_t index = 0;
  for (const auto& [name, spec] : parameters.items()) {
    const std::string type = spec.is_object() && !spec.empty() ? spec.begin().key() : "";
    const ordered_json& list = type.empty() ? spec : spec.begin().value();
    if (!list.is_array() || list.empty())
      throw InputError(fmt::format("parameters.{}: must be a non-empty list, or {{\"size\"|\"bandwidth\"|\"time\": list}}", name));
    const json value = json::parse(list[splitmix64(hash + ++index) % list.size()].dump());
    v.values.emplace_back(name, value);
    v.numbers[name] = number_of(type, value, "parameters." + name);
  }
  for (const auto& [name, expression] : derived.items())
    v.numbers[name] = evaluate(expression.get<std::string>(), v, {}, "derived." + name);
  return v;
}

json LabSheet::run_document(const std::string& run, const LabVariant& variant) const {
  const LabRun& spec = runs.at(run);
  json document = spec.scenario.empty() ? json::object()
                                        : load_scenario_json((fs::path(COLLSIM_SOURCE_DIR) / spec.scenario).string());
  for (const auto& [path, value] : spec.set.items()) set_path(document, path, substitute(json::parse(value.dump()), variant));
  document["name"] = fmt::format("{}-{}", lab, run);
  return document;
}

std::string LabSheet::run_command(const std::string& run, const LabVariant& variant) const {
  const LabRun& spec = runs.at(run);
  std::string command = "collsim run";
  if (!spec.scenario.empty()) command += " " + spec.scenario;
  for (const auto& [path, value] : spec.set.items()) {
    const std::string text = value_text(substitute(json::parse(value.dump()), variant));
    command += text.find_first_of(" \"'") == std::string::npos ? fmt::format(" --set {}={}", path, text)
                                                               : fmt::format(" --set '{}={}'", path, text);
  }
  return command;
}

double parse_answer(const json& answer, const std::string& unit, const std::string& field) {
  if (answer.is_boolean()) return answer.get<bool>() ? 1 : 0;
  if (answer.is_number()) return answer.get<double>();
  if (!answer.is_string()) throw InputError(fmt::format("{}: must be a number or a text with its unit", field));
  std::string text;
  for (char c : answer.get<std::string>())
    if (!std::isspace(static_cast<unsigned char>(c))) text += c;
  if (unit == "flag") {
    if (text == "yes" || text == "true") return 1;
    if (text == "no" || text == "false") return 0;
    throw InputError(fmt::format("{}: '{}'; allowed: yes, no", field, text));
  }
  if (text.empty()) throw InputError(fmt::format("{}: empty", field));
  if (unit == "ratio" && text.back() == '%') return parse_answer(text.substr(0, text.size() - 1), "count", field) / 100;
  if (unit == "time") return parse_time(text, field);
  if (unit == "size") return parse_size(text, field);
  if (unit == "bandwidth") {
    if (text.size() > 2 && text.substr(text.size() - 2) == "/s") text = text.substr(0, text.size() - 2) + "ps";
    return parse_bandwidth(text, field);
  }
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size() || (text.substr(used) == "x")) return value;
  } catch (const std::exception&) {
  }
  throw InputError(fmt::format("{}: '{}' is not a number", field, answer.get<std::string>()));
}

std::string format_answer(double value, const std::string& unit) {
  if (unit == "time") return format_time(value);
  if (unit == "bandwidth") return format_bandwidth(value);
  if (unit == "size") return format_size(value);
  if (unit == "flag") return value != 0 ? "yes" : "no";
  if (unit == "ratio") return fmt::format("{:.4g}", value);
  return fmt::format("{:.6g}", value);
}

}  // namespace collsim
