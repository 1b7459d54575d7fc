// The expressions of a grading sheet: what the answer to a question is, computed from the
// parameters and the runs' metrics (docs/labs/grading.md).
#include <cctype>
#include <cmath>
#include <fmt/format.h>

#include "report/lab_sheet.hpp"
#include "util/errors.hpp"

using nlohmann::json;

namespace collsim {
namespace {

class Expression {
public:
  Expression(const std::string& text, const LabVariant& variant, const std::map<std::string, json>& metrics,
             const std::string& field)
      : text_(text), variant_(variant), metrics_(metrics), field_(field) {}

  double value() {
    const double v = sum();
    skip_spaces();
    if (at_ < text_.size()) fail(fmt::format("unexpected '{}'", text_.substr(at_)));
    return v;
  }

private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("{}: {} in '{}'", field_, what, text_));
  }
  void skip_spaces() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool take(char c) {
    skip_spaces();
    if (at_ < text_.size() && text_[at_] == c) return ++at_, true;
    return false;
  }
  double sum() {
    double v = product();
    for (;;) {
      if (take('+')) v += product();
      else if (take('-')) v -= product();
      else return v;
    }
  }
  double product() {
    double v = factor();
    for (;;) {
      if (take('*')) v *= factor();
      else if (take('/')) v /= factor();
      else return v;
    }
  }
  std::string name() {
    const size_t start = at_;
    while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_'))
      ++at_;
    return text_.substr(start, at_ - start);
  }
  double factor() {
    skip_spaces();
    if (take('(')) {
      const double v = sum();
      if (!take(')')) fail("a ')' is missing");
      return v;
    }
    if (take('-')) return -factor();
    if (at_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[at_])) || text_[at_] == '.')) {
      size_t used = 0;
      double v = 0;
      try {
        v = std::stod(text_.substr(at_), &used);
      } catch (const std::exception&) {  // 1e999: beyond the doubles
        fail("a number beyond 1.8e308");
      }
      at_ += used;
      return v;
    }
    const std::string word = name();
    if (word.empty()) fail("a number, a parameter or RUN.METRIC is missing");
    if (take('(')) return function(word);
    if (at_ < text_.size() && text_[at_] == '.') {
      ++at_;
      return metric(word, name());
    }
    const auto it = variant_.numbers.find(word);
    if (it == variant_.numbers.end()) fail(fmt::format("'{}' is not a parameter of the sheet", word));
    return it->second;
  }
  double function(const std::string& word) {
    const double x = sum();
    if (!take(')')) fail("a ')' is missing");
    if (word == "ceil") return std::ceil(x - 1e-9);
    if (word == "floor") return std::floor(x + 1e-9);
    if (word == "log2") return std::log2(x);
    if (word == "abs") return std::fabs(x);
    fail(fmt::format("unknown function '{}'; allowed: abs, ceil, floor, log2", word));
  }
  double metric(const std::string& run, const std::string& key) const {
    const auto it = metrics_.find(run);
    if (it == metrics_.end()) fail(fmt::format("'{}' is not a run of the sheet", run));
    const json& values = it->second;
    if (!values.contains(key) || values[key].is_null()) fail(fmt::format("the run '{}' has no metric '{}'", run, key));
    return values[key].is_boolean() ? (values[key].get<bool>() ? 1.0 : 0.0) : values[key].get<double>();
  }

  const std::string& text_;
  const LabVariant& variant_;
  const std::map<std::string, json>& metrics_;
  const std::string& field_;
  size_t at_ = 0;
};

}  // namespace

double LabSheet::evaluate(const std::string& expression, const LabVariant& variant, const std::map<std::string, json>& metrics,
                          const std::string& field) const {
  return Expression(expression, variant, metrics, field).value();
}

}  // namespace collsim
