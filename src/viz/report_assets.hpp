#pragma once
// The style sheet and the script of the HTML report, inlined into every report so that
// it needs no network and no other file.
namespace collsim::viz {

extern const char* const report_css;
// Reads the JSON in <script id="steps-data"> and drives the step-through (#stepper).
extern const char* const report_script;

}  // namespace collsim::viz
