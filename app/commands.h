// The subcommands of the cellgan executable. Each parses its own options
// (Boost.Program_options), returns the process exit code, and lets
// InputError escape so main() prints it as one line.
//
// Only this folder writes to stdout: the results a user asked for.
#pragma once

#include <string>
#include <vector>

namespace cellgan::app {

using Args = std::vector<std::string>;

int train_command(int argc, char** argv, const Args& args);
int classifier_command(const Args& args);
int prepare_mnist_command(const Args& args);
int sample_command(const Args& args);
int score_command(const Args& args);
int export_command(const Args& args);
int sweep_command(const Args& args);
int launch_command(const Args& args);
int report_command(const Args& args);

}  // namespace cellgan::app
