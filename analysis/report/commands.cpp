#include "analysis/report/commands.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "analysis/record/peer_failures.hpp"
#include "analysis/record/run_database.hpp"
#include "analysis/report/database.hpp"
#include "analysis/report/format.hpp"
#include "analysis/report/merge.hpp"
#include "analysis/report/papers.hpp"
#include "analysis/report/plot.hpp"
#include "analysis/report/plot_data.hpp"
#include "analysis/report/reports.hpp"
#include "analysis/report/reproduce.hpp"
#include "analysis/report/simulate.hpp"

namespace commsgd::report {
namespace {

namespace fs = std::filesystem;

std::vector<Filter> parse_filters(const std::vector<std::string>& where) {
  std::vector<Filter> filters;
  for (const std::string& w : where) filters.push_back(parse_filter(w));
  return filters;
}

// An option's NAME=VALUE entry, both parts non-empty; otherwise InputError
// "OPTION ENTRY: expected EXPECTED".
std::pair<std::string, std::string> name_and_value(const std::string& entry,
                                                   std::string_view option,
                                                   std::string_view expected) {
  const std::size_t equals = entry.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == entry.size()) {
    throw InputError(fmt::format("{} {}: expected {}", option, entry, expected));
  }
  return {entry.substr(0, equals), entry.substr(equals + 1)};
}

// What every command over runs takes: the databases and which of their runs.
struct Selection {
  std::vector<std::string> databases;
  std::vector<std::string> where;
  std::vector<std::pair<std::string, std::string>> shortcuts;  // column, value (--algo topk)

  Connection open() const { return open_for_report({databases.begin(), databases.end()}); }
  std::vector<Filter> filters() const {
    std::vector<Filter> filters;
    for (const auto& [column, value] : shortcuts) {
      if (!value.empty()) filters.push_back(equals(column, value));
    }
    for (Filter& f : parse_filters(where)) filters.push_back(std::move(f));
    return filters;
  }
};

struct ReportOptions : Selection {
  Format format = Format::text;
};

void add_databases(CLI::App* cmd, std::vector<std::string>& databases) {
  cmd->add_option("databases", databases,
                  "Run databases (SQLite files of commsgd-train); several are read as one")
      ->required();
}

void add_where(CLI::App* cmd, std::vector<std::string>& where, const std::string& relation) {
  cmd->add_option("-w,--where", where,
                  fmt::format("Only rows where COLUMN OP VALUE (a column of {}; OP one of = != < "
                              "<= > >= and ~ for SQL LIKE); repeat to require several",
                              relation))
      ->allow_extra_args(false);  // one value per -w, so that databases may follow
}

void add_format(CLI::App* cmd, Format& format, std::string_view default_name) {
  cmd->add_option_function<std::string>(
         "-f,--format", [&format](const std::string& name) { format = format_names().at(name); },
         fmt::format("text, markdown, csv or json (default {})", default_name))
      ->check(CLI::IsMember(format_names()));
}

// Positional databases, --where on run_summary and the shortcut filters.
void add_run_selection(CLI::App* cmd, Selection& o) {
  add_databases(cmd, o.databases);
  add_where(cmd, o.where, "the run_summary view");
  o.shortcuts = {{"algo", ""},    {"model", ""},   {"dataset", ""},
                 {"network", ""}, {"workers", ""}, {"status", ""}};
  for (auto& [column, value] : o.shortcuts)
    cmd->add_option("--" + column, value, fmt::format("Same as -w {}=VALUE", column));
}

void print(const Table& table, Format format, const std::string& output = "") {
  if (output.empty()) return write_table(std::cout, table, format);
  std::ofstream out(output);
  if (!out) throw InputError(fmt::format("{}: cannot write", output));
  write_table(out, table, format);
}

// Adds a report over runs: `make` turns the opened database and the filters into its table.
template <class Make>
CLI::App* add_run_report(CLI::App& app, const std::string& name, const std::string& help,
                         Make make) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(name, help);
  add_run_selection(cmd, *o);
  add_format(cmd, o->format, "text");
  cmd->callback([o, make] { print(make(o->open(), o->filters()), o->format); });
  return cmd;
}

void add_reports(CLI::App& app) {
  add_run_report(app, "runs", "List runs: what ran, how it ended, accuracy, throughput",
                 runs_report);

  add_run_report(app, "grad-stats",
                 "Per run with --grad-stats-every: contraction of the selection against the "
                 "bounds 1-k/d and (1-k/d)^2",
                 grad_stats_report);

  add_run_report(app, "norm-study",
                 "Per run with --norm-study-every (the gTop-k paper's norm study): distance of the "
                 "applied update to the dense aggregate, against random-k's and the bound "
                 "(1-k/d)||x||",
                 norm_study_report);

  auto target = std::make_shared<std::optional<double>>();
  auto include_overlapping = std::make_shared<bool>(false);
  CLI::App* compare = add_run_report(
      app, "compare",
      "One row per configuration (every option that changes what a run computes, less the "
      "seed), network and workers, the options in which the rows differ as columns: "
      "throughput, speedup over dense, final accuracy, time to --target (each with its _sd over "
      "the row's runs), asked and achieved density, bytes per step. Runs that shared a host with "
      "another run at the same time (overlapped_by in `runs`) are left out and counted in "
      "overlapping_runs",
      [target, include_overlapping](const Connection& db, const std::vector<Filter>& f) {
        return compare_report(db, f, *target, *include_overlapping);
      });
  compare->add_flag("--include-overlapping", *include_overlapping,
                    "Average runs that overlapped others on a shared host too");
  compare
      ->add_option_function<double>(
          "--target", [target](double t) { *target = t; },
          "Validation top-1 to time, as a fraction (e.g. 0.9)")
      ->check(CLI::Range(0.0, 1.0));

  auto scaling_overlapping = std::make_shared<bool>(false);
  CLI::App* scaling = add_run_report(
      app, "scaling",
      "Scaling efficiency, configurations x worker counts: throughput / (P x the 1-worker "
      "throughput), with its _sd and n over the cell's runs. Runs that shared a host with "
      "another run at the same time are left out",
      [scaling_overlapping](const Connection& db, const std::vector<Filter>& f) {
        return scaling_report(db, f, *scaling_overlapping);
      });
  scaling->add_flag("--include-overlapping", *scaling_overlapping,
                    "Average runs that overlapped others on a shared host too (the 1-worker "
                    "baselines still leave them out)");

  auto shares = std::make_shared<bool>(false);
  CLI::App* breakdown =
      add_run_report(app, "breakdown",
                     "Mean seconds per iteration in each phase of the training thread, one row per "
                     "run: the phases add up to the step (total_s; other_s is the rest), and "
                     "communication a thread of its own overlapped with training is apart "
                     "(overlapped_communicate_s)",
                     [shares](const Connection& db, const std::vector<Filter>& f) {
                       return breakdown_report(db, f, *shares);
                     });
  breakdown->add_flag("--shares", *shares,
                      "Each phase's share of the step instead of seconds (they add up to 1)");

  add_run_report(app, "convergence", "Training and validation metrics per epoch, one row each",
                 convergence_report);
}

// A number as the help writes it: {:g}'s six significant digits, the exponent without the
// leading zero that {:g} pads it to ("9e-9", not "9e-09"), as the docs write it.
std::string help_number(double x) {
  std::string text = fmt::format("{:g}", x);
  const std::size_t e = text.find('e');
  if (e != std::string::npos && e + 3 < text.size() && text[e + 2] == '0') text.erase(e + 2, 1);
  return text;
}

// The link of a simulation: --alpha and --beta, or the pingpong fit recorded for --network.
struct LinkOptions {
  std::optional<double> alpha, beta;
  std::string network;

  void add_to(CLI::App* cmd, bool network_option) {
    cmd->add_option_function<double>(
           "--alpha", [this](double a) { alpha = a; }, "Latency per message, seconds")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option_function<double>(
           "--beta", [this](double b) { beta = b; }, "Seconds per byte (8e-9 for 1 Gbit/s)")
        ->check(CLI::NonNegativeNumber);
    if (network_option) {
      // The default's numbers are the constant's, so that the help cannot disagree with the link
      // the simulation uses.
      const MessageTime& paper = kPaperGigabitEthernet.exchange;
      cmd->add_option("--link-of", network,
                      fmt::format("Use the pingpong calibration recorded for this network (the "
                                  "median of its runs; default without --alpha/--beta: the "
                                  "papers' 1 GbE, alpha {} ms, beta {} s/B)",
                                  help_number(paper.alpha * 1e3), help_number(paper.beta)));
    }
  }

  // Throws InputError when only one of --alpha and --beta is given, or --link-of has no fit.
  std::optional<Link> given(const Connection& db) const {
    if (alpha.has_value() != beta.has_value()) {
      throw InputError("--alpha and --beta go together");
    }
    if (alpha) return plain_link(*alpha, *beta);
    if (network.empty()) return std::nullopt;
    const std::map<std::string, Link> links = calibrated_links(db);
    if (!links.contains(network)) {
      throw InputError(
          fmt::format("--link-of {}: no pingpong alpha-beta recorded for it", network));
    }
    return links.at(network);
  }
};

void add_simulate(CLI::App& app) {
  CLI::App* simulate = app.add_subcommand(
      "simulate",
      "The alpha-beta cost model: each run's time besides communication as measured, its "
      "communication predicted from P, d, k and the link");
  simulate->require_subcommand(1);

  struct Options : ReportOptions {
    LinkOptions link;
    int max_workers = 1024;
    std::vector<std::string> compute_ms;  // MODEL=MILLISECONDS

    // Throws InputError for an entry that is not MODEL=MILLISECONDS with a positive, finite time.
    ComputeTimes compute() const {
      ComputeTimes seconds;
      constexpr std::string_view expected = "MODEL=MILLISECONDS, a positive time";
      for (const std::string& entry : compute_ms) {
        const auto [model, text] = name_and_value(entry, "--compute-ms", expected);
        double ms = 0;
        const char* const last = text.data() + text.size();
        const auto parsed = std::from_chars(text.data(), last, ms);
        if (parsed.ec != std::errc() || parsed.ptr != last || !std::isfinite(ms) || ms <= 0) {
          throw InputError(fmt::format("--compute-ms {}: expected {}", entry, expected));
        }
        seconds[model] = ms / 1e3;
      }
      return seconds;
    }
    void add_compute_option(CLI::App* cmd) {
      cmd->add_option("--compute-ms", compute_ms,
                      "MODEL=MILLISECONDS (repeatable): the model's iteration time besides "
                      "communication, e.g. measured on a GPU, instead of its selected dense runs', "
                      "which it then needs none of. Each algorithm's parameter count, density and "
                      "selection time still come from its selected runs of the model")
          ->allow_extra_args(false);
    }
  };
  const auto add_kind = [simulate](const std::string& name, const std::string& help, bool link_of) {
    auto o = std::make_shared<Options>();
    CLI::App* cmd = simulate->add_subcommand(name, help);
    add_run_selection(cmd, *o);
    add_format(cmd, o->format, "text");
    o->link.add_to(cmd, link_of);
    return std::pair(cmd, o);
  };

  auto [check, c] = add_kind("check",
                             "Predicted against measured seconds per iteration and of "
                             "communication for every selected run (link: the pingpong fit of the "
                             "run's network, or --alpha/--beta); communication measured as the "
                             "mean over the steady windows, and as their median, which a window "
                             "the process was held up in does not move",
                             false);
  check->callback([c] {
    const Connection db = c->open();
    print(simulate_check_report(db, c->filters(), c->link.given(db)), c->format);
  });

  auto calibration = std::make_shared<ReportOptions>();
  CLI::App* calibrate = simulate->add_subcommand(
      "calibration",
      "What the model takes from commsgd-bench pingpong (per network) and merge: each value and "
      "each measured size's time, the median over the database's runs of each");
  add_databases(calibrate, calibration->databases);
  add_format(calibrate, calibration->format, "text");
  calibrate->callback(
      [calibration] { print(calibration_report(calibration->open()), calibration->format); });

  auto [scaling, s] = add_kind("scaling",
                               "Predicted scaling efficiency of each recorded algorithm, per "
                               "model, for P = 1, 2, 4, ... up to --max-workers",
                               true);
  scaling->add_option("--max-workers", s->max_workers, "Largest P")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  s->add_compute_option(scaling);
  scaling->callback([s] {
    const Connection db = s->open();
    const Link link = s->link.given(db).value_or(kPaperGigabitEthernet);
    print(simulate_scaling_report(db, s->filters(), link, s->max_workers, s->compute()), s->format);
  });

  auto [paper, p] = add_kind("paper",
                             "ResNet-20 and VGG-16 at 32 workers: predicted scaling efficiency "
                             "beside the gTop-k paper's 1 GbE table, with the difference (compute "
                             "as measured in the selected runs)",
                             true);
  p->add_compute_option(paper);
  auto compute_of_paper = std::make_shared<bool>(false);
  paper->add_flag("--compute-of-paper", *compute_of_paper,
                  "Each model's computation per iteration as the paper's time breakdown gives it "
                  "(results/papers.toml), so that only communication is predicted");
  paper->callback([p, compute_of_paper] {
    const Connection db = p->open();
    const Link link = p->link.given(db).value_or(kPaperGigabitEthernet);
    print(simulate_paper_report(db, p->filters(), link, p->compute(), *compute_of_paper),
          p->format);
  });
}

void add_merge(CLI::App& app) {
  struct Options {
    std::vector<std::string> databases;
    std::string output;
    Format format = Format::text;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Copy runs and benchmarks into one database; merging again adds nothing");
  cmd->add_option("-o,--output", o->output, "Database to merge into (created if missing)")
      ->required();
  add_databases(cmd, o->databases);
  add_format(cmd, o->format, "text");
  cmd->callback([o] {
    std::vector<Connection> sources;  // all checked before anything is written
    for (const std::string& file : o->databases) {
      if (fs::exists(file) && fs::exists(o->output) && fs::equivalent(file, o->output))
        throw InputError(fmt::format("{}: is the merge's output", file));
      sources.push_back(open_run_database(file));
    }
    // RunDatabase creates the file, or checks and migrates it, and installs the views.
    { const record::RunDatabase created(o->output); }
    const Connection dest(o->output, SQLITE_OPEN_READWRITE, o->output);
    sqlite3_busy_timeout(dest.get(), 30'000);  // trainers may be writing to it
    dest.exec("PRAGMA foreign_keys = ON");
    record::RunDatabase folded(o->output);  // the failures kept beside a source, as rank 0 would
    Table t{{"database", "runs_added", "runs_updated", "epochs", "steps", "grad_stats",
             "norm_study", "ranks", "bench", "peer_failures"},
            {}};
    for (const Connection& source : sources) {
      const MergeCounts c = merge_into(dest, source);
      const std::int64_t peer_failures = record::record_peer_failures(folded, source.name());
      t.rows.push_back({source.name(), c.runs_added, c.runs_updated, c.epochs, c.steps,
                        c.grad_stats, c.norm_study, c.ranks, c.bench, peer_failures});
    }
    print(t, o->format);
  });
}

void add_export(CLI::App& app) {
  struct Options {
    std::string relation, output;
    std::vector<std::string> databases, where;
    Format format = Format::csv;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Every row of a table or view (e.g. steps, run_summary), as CSV for pandas");
  cmd->add_option("table", o->relation, "Table or view")->required();
  add_databases(cmd, o->databases);
  add_where(cmd, o->where, "the table");
  add_format(cmd, o->format, "csv");
  cmd->add_option("-o,--output", o->output, "Write to this file instead of stdout");
  cmd->callback([o] {
    const Connection db = open_for_report({o->databases.begin(), o->databases.end()});
    print(export_report(db, o->relation, parse_filters(o->where)), o->format, o->output);
  });
}

void add_sql(CLI::App& app) {
  struct Options {
    std::string query;
    std::vector<std::string> databases, params;
    Format format = Format::text;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "sql", "Run one read-only query (the tables and the views of analysis/views.sql)");
  cmd->add_option("query", o->query, "One SQL statement; ? for each --param")->required();
  add_databases(cmd, o->databases);
  cmd->add_option("-p,--param", o->params, "Value for the next ? (a number or text)")
      ->allow_extra_args(false);
  add_format(cmd, o->format, "text");
  cmd->callback([o] {
    std::vector<Value> params;
    for (const std::string& p : o->params) params.push_back(parse_value(p));
    const Connection db = open_for_report({o->databases.begin(), o->databases.end()});
    print(sql_report(db, o->query, params), o->format);
  });
}

void add_plots(CLI::App& app) {
  CLI::App* plot = app.add_subcommand("plot", "Draw a figure (PNG, SVG or PDF by -o's suffix)");
  plot->require_subcommand(1);
  struct Options : Selection {
    std::string output, metric = "val_top1";  // metric: convergence only
  };
  const auto add_kind = [plot](const std::string& name, const std::string& help, auto data) {
    auto o = std::make_shared<Options>();
    CLI::App* cmd = plot->add_subcommand(name, help);
    cmd->add_option("-o,--output", o->output, "Figure file: .png, .svg or .pdf")->required();
    cmd->callback([o, data] {
      check_figure_path(o->output);
      draw(data(o->open(), *o), o->output);
    });
    return std::pair(cmd, o);
  };

  auto [convergence, c] =
      add_kind("convergence", "A metric against epoch and against wall time, one line per run",
               [](const Connection& db, const Options& o) {
                 return convergence_data(db, o.filters(), o.metric);
               });
  add_run_selection(convergence, *c);
  convergence->add_option("--metric", c->metric, "What to plot")
      ->check(CLI::IsMember(convergence_metrics()))
      ->capture_default_str();

  auto [scaling, s] = add_kind(
      "scaling", "Scaling efficiency bars, algorithms x workers",
      [](const Connection& db, const Options& o) { return scaling_data(db, o.filters()); });
  add_run_selection(scaling, *s);

  auto [breakdown, b] = add_kind(
      "breakdown",
      "Stacked seconds per iteration by phase, per run: each bar is the step, and communication "
      "overlapped with training is a thin bar apart",
      [](const Connection& db, const Options& o) { return breakdown_data(db, o.filters()); });
  add_run_selection(breakdown, *b);

  auto [grad_stats, g] = add_kind(
      "grad-stats",
      "Contraction of the selection against 1-k/d and (1-k/d)^2 over training, and the "
      "histogram of the accumulated gradient at the last measurement",
      [](const Connection& db, const Options& o) { return grad_stats_data(db, o.filters()); });
  add_run_selection(grad_stats, *g);

  auto [norm_study, n] = add_kind(
      "norm-study",
      "The gTop-k paper's norm study: ||x - u|| of the applied update, ||x - randk(x)|| and "
      "(1-k/d)||x|| over training, per run",
      [](const Connection& db, const Options& o) { return norm_study_data(db, o.filters()); });
  add_run_selection(norm_study, *n);

  auto [selection, l] = add_kind(
      "selection", "Gaussian vs exact selection time against d (bench rows of commsgd-bench)",
      [](const Connection& db, const Options& o) {
        return selection_data(db, parse_filters(o.where));
      });
  add_databases(selection, l->databases);
  add_where(selection, l->where, "the bench table");
}

// One command of this tool, run in this process, with what it prints to stdout captured.
std::string run_captured(const std::vector<std::string>& args) {
  CLI::App app;
  app.name("commsgd-report");
  app.require_subcommand(1);
  add_commands(app);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them so
  std::ostringstream captured;
  struct Restore {
    std::streambuf* previous;
    ~Restore() { std::cout.rdbuf(previous); }
  } restore{std::cout.rdbuf(captured.rdbuf())};
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw InputError(fmt::format("commsgd-report {}: {}", args.empty() ? "" : args[0], e.what()));
  }
  return captured.str();
}

void add_reproduce(CLI::App& app) {
  struct Options {
    std::string spec, output, root = ".";
    std::vector<std::string> databases;  // NAME=PATH
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "reproduce",
      "Write a results page from its spec (results/*/page.toml): a paper's values and claims "
      "(results/papers.toml) beside the tables that commsgd-report commands give over the "
      "databases the spec names, with each claim's verdict from a query over them and the "
      "scale of the runs it rests on");
  cmd->add_option("spec", o->spec, "The page's spec, e.g. results/gtopk/page.toml")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", o->output,
                  "Write the page here (- for stdout; default: the spec's page under --root)");
  cmd->add_option("--root", o->root, "The repository root, which the spec's paths are relative to")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  cmd->add_option("-d,--database", o->databases,
                  "NAME=PATH: read the spec's database NAME from PATH instead (a copy, say); "
                  "the page names it by the spec's path all the same")
      ->allow_extra_args(false);
  cmd->callback([o] {
    const PageSpec spec = read_page_spec(o->spec);
    std::map<std::string, fs::path> database_at;
    for (const std::string& entry : o->databases) {
      const auto [name, path] = name_and_value(entry, "--database", "NAME=PATH");
      database_at[name] = path;
    }
    const std::string page = render_page(spec, o->root, database_at, run_captured);
    if (o->output == "-") {
      std::cout << page;
      return;
    }
    const fs::path output = o->output.empty() ? fs::path(o->root) / spec.page : fs::path(o->output);
    std::ofstream out(output);
    if (!out || !(out << page)) throw InputError(fmt::format("{}: cannot write", output.string()));
  });
}

void add_papers(CLI::App& app) {
  auto format = std::make_shared<Format>(Format::text);
  CLI::App* cmd = app.add_subcommand(
      "papers",
      "The values the reproduced papers report (results/papers.toml, built in), each with where "
      "it is read; every report's SQL sees them as the table paper_values");
  add_format(cmd, *format, "text");
  cmd->callback([format] { print(paper_values_table(), *format); });
}

}  // namespace

void add_commands(CLI::App& app) {
  add_reports(app);
  add_simulate(app);
  add_merge(app);
  add_export(app);
  add_sql(app);
  add_plots(app);
  add_reproduce(app);
  add_papers(app);
}

}  // namespace commsgd::report
