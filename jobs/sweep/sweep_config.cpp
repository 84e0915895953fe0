#include "jobs/sweep/sweep_config.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <set>

#include "trainer/options.hpp"

namespace commsgd::sweep {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& file, const std::string& what) {
  throw SweepError(fmt::format("{}: {}", file.string(), what));
}

// A scalar as commsgd-train's command line writes it.
std::string scalar_text(const toml::node& value, const fs::path& file, const std::string& key) {
  if (const auto* s = value.as_string()) return s->get();
  if (const auto* i = value.as_integer()) return std::to_string(i->get());
  if (const auto* f = value.as_floating_point()) return fmt::format("{}", f->get());
  fail(file, fmt::format("{}: values must be strings, numbers or booleans", key));
}

// One value of an option, as text (for ids and reports) and as the arguments it adds.
struct Value {
  std::string label;
  std::vector<std::string> arguments;
};

// A value of option `option`, which the sweep config names `key` ("axes.lr", "train.lr"):
// `--option=value`, the flag for true, nothing for false, and comma-joined items for a
// list-valued option.
Value option_value(const std::string& option, const toml::node& value, const fs::path& file,
                   const std::string& key) {
  if (const auto* flag = value.as_boolean()) {
    return {flag->get() ? "true" : "false",
            flag->get() ? std::vector<std::string>{"--" + option} : std::vector<std::string>{}};
  }
  std::string text;
  if (const auto* list = value.as_array()) {
    for (const toml::node& item : *list) {
      if (item.is_array()) fail(file, key + ": lists may not nest deeper than one level");
      text += (text.empty() ? "" : ",") + scalar_text(item, file, key);
    }
  } else {
    text = scalar_text(value, file, key);
  }
  return {text, {fmt::format("--{}={}", option, text)}};
}

// commsgd-train's options by long name, the keys a sweep may set, read from its own declarations.
bool is_trainer_option(const std::string& name) {
  static const std::set<std::string> names = [] {
    CLI::App app;
    trainer::Options options;
    trainer::add_options(app, options);
    std::set<std::string> found;
    for (const CLI::Option* option : app.get_options()) found.insert(option->get_single_name());
    found.erase("help");
    return found;
  }();
  return names.contains(name);
}

// Options every point gets from the sweep itself: its base config, database and checkpoints.
void refuse_set_by_sweep(const std::string& option, const std::string& key, const fs::path& file) {
  for (const char* own : {"config", "db", "db-dir", "checkpoint-dir", "resume"}) {
    if (option == own) fail(file, fmt::format("{}: set by the sweep itself", key));
  }
}

// Caught here, a misspelt key names the file and the key; caught by commsgd-train's parse of
// each point, it would name a point.
void refuse_unknown_option(const std::string& option, const std::string& key,
                           const fs::path& file) {
  if (!is_trainer_option(option)) {
    fail(file, fmt::format("unknown key '{}': not a commsgd-train option", key));
  }
}

int positive_int(const toml::table& table, std::string_view key, int fallback, const fs::path& file,
                 bool zero_allowed) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return fallback;
  const auto* value = node->as_integer();
  const long long lowest = zero_allowed ? 0 : 1;
  if (value == nullptr || value->get() < lowest || value->get() > 1'000'000) {
    fail(file, fmt::format("slurm.{} must be an integer >= {}", key, lowest));
  }
  return static_cast<int>(value->get());
}

std::string text(const toml::table& table, std::string_view section, std::string_view key,
                 const fs::path& file) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return {};
  if (!node->is_string()) fail(file, fmt::format("{}.{} must be a string", section, key));
  return node->as_string()->get();
}

void check_known_keys(const toml::table& table, std::string_view section,
                      const std::set<std::string_view>& known, const fs::path& file) {
  for (const auto& [key, value] : table) {
    if (!known.contains(key.str())) {
      fail(file, section.empty() ? fmt::format("unknown section or key '{}'", key.str())
                                 : fmt::format("unknown key '{}.{}'", section, key.str()));
    }
  }
}

const toml::table& section(const toml::table& root, std::string_view name, const fs::path& file) {
  const toml::node* node = root.get(name);
  if (node == nullptr || !node->is_table())
    fail(file, fmt::format("a [{}] table is required", name));
  return *node->as_table();
}

SlurmResources read_slurm(const toml::table& root, const fs::path& file) {
  SlurmResources r;
  const toml::node* node = root.get("slurm");
  if (node == nullptr) return r;
  if (!node->is_table()) fail(file, "slurm must be a table");
  const toml::table& t = *node->as_table();
  // Its name before commsgd-sweep's --max-running overrode it: say the new one, not "unknown".
  if (t.contains("max-parallel")) fail(file, "slurm.max-parallel is now slurm.max-running");
  check_known_keys(t, "slurm",
                   {"tasks-per-node", "cpus-per-task", "gpus-per-node", "time", "partition",
                    "account", "max-running", "exclusive", "extra"},
                   file);
  r.tasks_per_node = positive_int(t, "tasks-per-node", r.tasks_per_node, file, false);
  r.cpus_per_task = positive_int(t, "cpus-per-task", r.cpus_per_task, file, false);
  r.gpus_per_node = positive_int(t, "gpus-per-node", r.gpus_per_node, file, true);
  r.max_running = positive_int(t, "max-running", r.max_running, file, true);
  r.time = text(t, "slurm", "time", file);
  r.partition = text(t, "slurm", "partition", file);
  r.account = text(t, "slurm", "account", file);
  if (const toml::node* exclusive = t.get("exclusive")) {
    if (!exclusive->is_boolean()) fail(file, "slurm.exclusive must be true or false");
    r.exclusive = exclusive->as_boolean()->get();
  }
  if (const toml::node* extra = t.get("extra")) {
    const auto* list = extra->as_array();
    if (list == nullptr) fail(file, "slurm.extra must be a list of sbatch options");
    for (const toml::node& option : *list) {
      if (!option.is_string() || !option.as_string()->get().starts_with("--")) {
        fail(file, "slurm.extra: each item must be one sbatch option such as \"--qos=high\"");
      }
      r.extra.push_back(option.as_string()->get());
    }
  }
  return r;
}

std::vector<Axis> read_axes(const toml::table& root, const fs::path& file) {
  std::vector<Axis> axes;
  for (const auto& [key, value] : section(root, "axes", file)) {
    Axis axis;
    axis.name = std::string(key.str());
    const auto* values = value.as_array();
    if (values == nullptr || values->empty()) {
      fail(file, fmt::format("axes.{} must be a non-empty list of values", axis.name));
    }
    const std::string where = "axes." + axis.name;
    refuse_set_by_sweep(axis.name, where, file);
    for (const toml::node& v : *values) {
      Value parsed = option_value(axis.name, v, file, where);
      axis.labels.push_back(std::move(parsed.label));
      axis.arguments.push_back(std::move(parsed.arguments));
    }
    if (std::set(axis.labels.begin(), axis.labels.end()).size() != axis.labels.size()) {
      fail(file, fmt::format("axes.{} lists a value twice", axis.name));
    }
    if (axis.name != "workers") refuse_unknown_option(axis.name, where, file);
    axes.push_back(std::move(axis));
  }
  for (const std::string_view required : {"workers", "network"}) {
    if (std::none_of(axes.begin(), axes.end(), [&](const Axis& a) { return a.name == required; })) {
      fail(file, fmt::format("axes.{} is required", required));
    }
  }
  return axes;
}

// The settings of a [train] or [algo.NAME] table, whose keys `prefix` ("train", "algo.sgp") names.
std::vector<Setting> read_settings(const toml::table& table, const std::string& prefix,
                                   const std::vector<Axis>& axes, const fs::path& file) {
  std::vector<Setting> settings;
  for (const auto& [name, value] : table) {
    const std::string option(name.str());
    const std::string key = prefix + "." + option;
    refuse_set_by_sweep(option, key, file);
    // Two values for one point: say which, rather than let the later argument win unseen.
    if (std::any_of(axes.begin(), axes.end(), [&](const Axis& a) { return a.name == option; })) {
      fail(file, fmt::format("{}: also an axis (axes.{}); set it in one place", key, option));
    }
    refuse_unknown_option(option, key, file);
    settings.push_back({option, option_value(option, value, file, key).arguments});
  }
  return settings;
}

std::vector<Setting> read_train(const toml::table& root, const std::vector<Axis>& axes,
                                const fs::path& file) {
  const toml::node* node = root.get("train");
  if (node == nullptr) return {};
  if (!node->is_table()) fail(file, "train must be a table of commsgd-train options");
  return read_settings(*node->as_table(), "train", axes, file);
}

// [algo.NAME] for each NAME among axes.algo's values: the settings only that algorithm takes
// (--topology for a gossip algorithm, which dense refuses), or its own value of one.
std::map<std::string, std::vector<Setting>> read_per_algo(const toml::table& root,
                                                          const std::vector<Axis>& axes,
                                                          const fs::path& file) {
  std::map<std::string, std::vector<Setting>> per_algo;
  const toml::node* node = root.get("algo");
  if (node == nullptr) return per_algo;
  if (!node->is_table()) fail(file, "algo must hold [algo.NAME] tables");
  const auto algo =
      std::find_if(axes.begin(), axes.end(), [](const Axis& a) { return a.name == "algo"; });
  for (const auto& [name, settings] : *node->as_table()) {
    const std::string table = "algo." + std::string(name.str());
    if (!settings.is_table()) {
      fail(file,
           fmt::format("{} must be a table: [algo.NAME] holds the settings of --algo NAME", table));
    }
    if (algo == axes.end()) {
      fail(file, fmt::format("[{}]: per-algorithm settings need an axes.algo", table));
    }
    if (std::find(algo->labels.begin(), algo->labels.end(), name.str()) == algo->labels.end()) {
      fail(file, fmt::format("[{}]: '{}' is not among axes.algo's values", table, name.str()));
    }
    per_algo[std::string(name.str())] = read_settings(*settings.as_table(), table, axes, file);
  }
  return per_algo;
}

// File names keep letters, digits, '.', '-' and '+'; everything else becomes '-'.
std::string file_safe(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const bool keep =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+';
    if (!keep) c = '-';
  }
  return out;
}

// FNV-1a: ids stay unique when file_safe() maps two labels to the same text.
std::uint32_t fnv1a(std::string_view text) {
  std::uint32_t h = 2166136261u;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

int parse_workers(const std::string& label, const fs::path& file) {
  std::size_t used = 0;
  int workers = 0;
  try {
    workers = std::stoi(label, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != label.size() || workers < 1) {
    fail(file, fmt::format("axes.workers: '{}' is not a positive integer", label));
  }
  return workers;
}

}  // namespace

SweepConfig read_sweep_config(const fs::path& file) {
  toml::table root;
  try {
    root = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    if (!fs::exists(file)) fail(file, "no such file");
    fail(file, fmt::format("line {}: {}", e.source().begin.line, e.description()));
  }
  check_known_keys(root, "", {"sweep", "slurm", "axes", "train", "algo"}, file);
  const toml::table& sweep = section(root, "sweep", file);
  check_known_keys(sweep, "sweep", {"name", "config", "check-data"}, file);

  SweepConfig c;
  c.file = fs::absolute(file);
  c.name = text(sweep, "sweep", "name", file);
  if (c.name.empty() || c.name != file_safe(c.name)) {
    fail(file, "sweep.name is required: letters, digits, '.', '-' and '+' only");
  }
  const std::string base = text(sweep, "sweep", "config", file);
  if (base.empty()) fail(file, "sweep.config (the base commsgd-train config) is required");
  c.base_config = fs::weakly_canonical(c.file.parent_path() / base);
  if (!fs::is_regular_file(c.base_config)) {
    fail(file, fmt::format("sweep.config: {} does not exist", c.base_config.string()));
  }
  if (const toml::node* check = sweep.get("check-data")) {
    if (!check->is_boolean()) fail(file, "sweep.check-data must be true or false");
    c.check_data = check->as_boolean()->get();
  }
  c.slurm = read_slurm(root, file);
  c.axes = read_axes(root, file);
  c.train = read_train(root, c.axes, file);
  c.per_algo = read_per_algo(root, c.axes, file);
  return c;
}

std::vector<Point> expand(const SweepConfig& config) {
  std::vector<Point> points;
  std::vector<std::size_t> choice(config.axes.size(), 0);
  while (true) {
    Point p;
    p.trainer_arguments = {"--config", config.base_config.string()};
    std::string readable, canonical, algo;
    for (std::size_t a = 0; a < config.axes.size(); ++a) {
      const Axis& axis = config.axes[a];
      const std::string& label = axis.labels[choice[a]];
      readable += fmt::format("{}{}-{}", readable.empty() ? "" : "_", file_safe(axis.name),
                              file_safe(label));
      canonical += axis.name + '\0' + label + '\0';
      if (axis.name == "workers") {
        p.workers = parse_workers(label, config.file);
      } else if (axis.name == "network") {
        p.network = label;
      } else {
        if (axis.name == "algo") algo = label;
        const auto& args = axis.arguments[choice[a]];
        p.trainer_arguments.insert(p.trainer_arguments.end(), args.begin(), args.end());
      }
    }
    // [train]'s settings, each replaced by the point's algorithm's own where it has one.
    std::map<std::string, const Setting*> settings;
    for (const Setting& s : config.train) settings[s.name] = &s;
    if (const auto own = config.per_algo.find(algo); own != config.per_algo.end()) {
      for (const Setting& s : own->second) settings[s.name] = &s;
    }
    for (const auto& [name, setting] : settings) {
      p.trainer_arguments.insert(p.trainer_arguments.end(), setting->arguments.begin(),
                                 setting->arguments.end());
    }
    // One intra-op thread pool per rank, as large as Slurm's share of cores for it.
    if (std::none_of(config.axes.begin(), config.axes.end(),
                     [](const Axis& axis) { return axis.name == "threads"; }) &&
        !settings.contains("threads")) {
      p.trainer_arguments.push_back(fmt::format("--threads={}", config.slurm.cpus_per_task));
    }
    p.id = fmt::format("{}-{:08x}", readable, fnv1a(canonical));
    p.nodes = (p.workers + config.slurm.tasks_per_node - 1) / config.slurm.tasks_per_node;
    points.push_back(std::move(p));

    std::size_t a = config.axes.size();
    while (a > 0 && ++choice[a - 1] == config.axes[a - 1].labels.size()) choice[--a] = 0;
    if (a == 0) return points;
  }
}

std::string train_on_requested_gpus(Point& point, const std::string& device,
                                    const SlurmResources& slurm) {
  if (slurm.gpus_per_node == 0 || device.starts_with("cuda")) return device;
  const bool named = std::any_of(point.trainer_arguments.begin(), point.trainer_arguments.end(),
                                 [](const std::string& a) { return a.starts_with("--device="); });
  if (device == "auto" && !named) {
    point.trainer_arguments.push_back("--device=cuda");
    return "cuda";
  }
  throw SweepError(fmt::format(
      "point {}: slurm.gpus-per-node = {} asks for GPUs, but it trains with --device {}; set "
      "device to cuda or leave it out (the sweep then gives --device cuda), or ask for no GPUs",
      point.id, slurm.gpus_per_node, device));
}

}  // namespace commsgd::sweep
