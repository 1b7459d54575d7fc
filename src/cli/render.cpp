// `collsim render`: the pictures of a trace, or a sweep's results table as a line plot.
#include <memory>

#include "cli/command.hpp"
#include "report/commands.hpp"
#include "sweep/plot.hpp"
#include "sweep/runner.hpp"

namespace collsim::cli {

Command add_render_command(CLI::App& app) {
  struct Flags {
    RenderRequest request;
    std::string plot;
    PlotSpec plot_spec;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* render = app.add_subcommand("render", "Draw the pictures of a trace written by `collsim run --trace`");
  render->add_option("trace", flags->request.trace_path,
                     "Trace file (collsim-trace/2), or a sweep's results table with --plot")->required();
  render->add_option("--plot", flags->plot, "Results table (sweep --out) as an SVG line plot");
  render->add_option("--x", flags->plot_spec.x, "With --plot: axis on the x axis (default: the first numeric axis)");
  render->add_option("--y", flags->plot_spec.y, "With --plot: metric on the y axis (default: simulated_time)");
  render->add_option("--series", flags->plot_spec.series, "With --plot: axis with one line per value");
  render->add_option("--svg", flags->request.svg_path, "Timeline (SVG); of a parallel run's trace, its lanes");
  render->add_option("--html", flags->request.html_path, "Self-contained HTML report (a parallel run's trace: its figures and lanes)");
  render->add_option("--perfetto", flags->request.perfetto_path,
                     "Chrome trace events (JSON) for ui.perfetto.dev or chrome://tracing (a parallel run's trace: one "
                     "lane per communicator per rank)");
  return {render, [flags] {
            if (!flags->plot.empty())
              return plot_sweep_results(flags->request.trace_path, flags->plot, flags->plot_spec);
            return command_render(flags->request);
          }};
}

}  // namespace collsim::cli
