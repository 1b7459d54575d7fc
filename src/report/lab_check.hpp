#pragma once
// `collsim check LAB`: a student's sheet (their parameters, the commands, the questions),
// an answers template, and the grading of answer files against values computed by running
// collsim on that student's parameters (docs/labs/grading.md).
#include <string>
#include <vector>

namespace collsim {

struct CheckRequest {
  std::string lab;                  // "lab2" or a sheet's path
  std::vector<std::string> answers;  // answer files to grade; none: print the sheet of --student
  std::string student;              // with no answer files: whose sheet
  bool template_only = false;       // print an answers file to fill in
  bool reveal = false;              // also print the expected values (for instructors)
  std::string csv;                  // a gradebook: one row per answer file
  int jobs = 0;                     // runs at once (0: the number of cores)
};

// Exit status: 0 every answer right (or a sheet printed), 1 some answer wrong or missing,
// 2 bad input.
int command_check(const CheckRequest& request);

}  // namespace collsim
