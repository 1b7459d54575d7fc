#pragma once
// Output files appear whole or not at all: write to a temporary beside the target, then
// rename over it. A failed run leaves no half-written file, and an output never replaces
// what is not its own: one of the run's inputs, a folder, a FIFO, a device node or a
// socket is refused; a symbolic link is written through (the file it points to is
// replaced, the link stays).
#include <string>
#include <vector>

namespace collsim {

// Refuses, with an InputError naming `field`, an output path that could not be written:
// one of the run's inputs (util/input_file.hpp), an existing folder or non-regular file,
// a name too long for the file system, or a folder that does not exist and cannot be
// created, or is not writable. Called for every output before a run starts, so that a
// long simulation never ends on a bad path.
void check_output_path(const std::string& path, const std::string& field);

// `field` names the option that asked for the file, for the error message. Inside an
// OutputBatch the file only appears when the batch commits.
void write_file_atomically(const std::string& path, const std::string& contents, const std::string& field);

// Several outputs that appear together or not at all: while a batch is alive, writes go
// to temporaries; commit() renames them all; a batch destroyed without commit (an error
// in a later output) removes them.
class OutputBatch {
public:
  OutputBatch();
  ~OutputBatch();
  OutputBatch(const OutputBatch&) = delete;
  OutputBatch& operator=(const OutputBatch&) = delete;
  void commit();
};

// SIGINT and SIGTERM remove the temporaries being written and exit with 128 + the
// signal (130 for Ctrl-C). Async-signal-safe: unlink and _exit only; the SimGrid engine
// is left alone. Called at start and again after the engine installs its own handlers.
void remove_temporaries_on_interrupt();

}  // namespace collsim
