// commsgd-sweep's planning: sweep configs read and expanded into points, bad configs refused with
// a message naming the problem, points split into arrays the cluster accepts, job commands built
// as argument vectors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "jobs/sweep/cluster_limits.hpp"
#include "jobs/sweep/jobs_plan.hpp"
#include "jobs/sweep/sweep_config.hpp"
#include "trainer/options.hpp"

namespace commsgd::sweep {
namespace {

namespace fs = std::filesystem;

// A point's command line as commsgd-train reads it.
trainer::Options parse_point(const std::vector<std::string>& arguments) {
  std::vector<const char*> argv = {"commsgd-train"};
  for (const std::string& a : arguments) argv.push_back(a.c_str());
  trainer::Options o;
  EXPECT_EQ(trainer::parse_options(static_cast<int>(argv.size()), argv.data(), o, false),
            trainer::ParseOutcome::run);
  return o;
}

class SweepConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("commsgd-test-sweep-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream(dir_ / "base.toml") << "model = \"mlp\"\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& text) {
    const fs::path file = dir_ / "sweep.toml";
    std::ofstream(file) << text;
    return file;
  }

  fs::path dir_;
};

const char* const kGood = R"(
[sweep]
name = "demo"
config = "base.toml"
[slurm]
tasks-per-node = 4
cpus-per-task = 2
[axes]
algo = ["dense", "gtopk"]
workers = [4, 8, 6]
network = ["ethernet", "infiniband"]
nesterov = [true, false]
mlp-hidden = [[64, 32], [128]]
)";

TEST_F(SweepConfigTest, ExpandsTheCrossProductIntoUniquePoints) {
  const SweepConfig c = read_sweep_config(write(kGood));
  EXPECT_EQ(c.name, "demo");
  EXPECT_EQ(c.base_config, fs::canonical(dir_ / "base.toml"));
  const std::vector<Point> points = expand(c);
  ASSERT_EQ(points.size(), 2u * 3 * 2 * 2 * 2);
  std::set<std::string> ids;
  for (const Point& p : points) ids.insert(p.id);
  EXPECT_EQ(ids.size(), points.size());

  // Axes by name: algo, mlp-hidden, nesterov, network, workers; the last varies fastest.
  const Point& first = points[0];
  EXPECT_EQ(first.workers, 4);
  EXPECT_EQ(first.nodes, 1);
  EXPECT_EQ(first.network, "ethernet");
  EXPECT_EQ(first.trainer_arguments,
            (std::vector<std::string>{"--config", c.base_config.string(), "--algo=dense",
                                      "--mlp-hidden=64,32", "--nesterov", "--threads=2"}));
  EXPECT_EQ(points[1].workers, 8);
  EXPECT_EQ(points[1].nodes, 2);
  EXPECT_EQ(points[2].nodes, 2);  // 6 ranks on nodes of 4
  const Point& no_flag = points[6];
  EXPECT_EQ(no_flag.network, "ethernet");
  EXPECT_EQ(
      std::count(no_flag.trainer_arguments.begin(), no_flag.trainer_arguments.end(), "--nesterov"),
      0);
  EXPECT_EQ(first.id.substr(0, first.id.rfind('-')),
            "algo-dense_mlp-hidden-64-32_nesterov-true_network-ethernet_workers-4");
}

// [train] goes to every point and [algo.NAME] to the points of that algorithm, in place of
// [train]'s value of the same option, after the axes' options; each point is one commsgd-train
// accepts, a gossip graph only where the algorithm is a gossip one.
TEST_F(SweepConfigTest, GivesTrainSettingsToEveryPointAndAlgoSettingsToTheirAlgorithm) {
  const SweepConfig c = read_sweep_config(write(R"(
[sweep]
name = "demo"
config = "base.toml"
[train]
lr = 0.05
nesterov = true
mlp-hidden = [64, 32]
[algo.sgp]
topology = "ring"
lr = 0.2
[algo.dpsgd]
topology = "ring"
gossip-mixing = "directed"
[axes]
algo = ["dense", "sgp", "dpsgd"]
workers = [4]
network = ["ethernet"]
)"));
  const std::vector<Point> points = expand(c);
  ASSERT_EQ(points.size(), 3u);
  const std::string base = c.base_config.string();
  using Arguments = std::vector<std::string>;
  EXPECT_EQ(points[0].trainer_arguments,
            (Arguments{"--config", base, "--algo=dense", "--lr=0.05", "--mlp-hidden=64,32",
                       "--nesterov", "--threads=1"}));
  EXPECT_EQ(points[1].trainer_arguments,
            (Arguments{"--config", base, "--algo=sgp", "--lr=0.2", "--mlp-hidden=64,32",
                       "--nesterov", "--topology=ring", "--threads=1"}));
  EXPECT_EQ(points[2].trainer_arguments,
            (Arguments{"--config", base, "--algo=dpsgd", "--gossip-mixing=directed", "--lr=0.05",
                       "--mlp-hidden=64,32", "--nesterov", "--topology=ring", "--threads=1"}));
  for (const Point& p : points) parse_point(p.trainer_arguments);

  // A thread count set for every point takes the place of Slurm's share of cores.
  const SweepConfig threads = read_sweep_config(
      write("[sweep]\nname = \"x\"\nconfig = \"base.toml\"\n[train]\nthreads = 3\n"
            "[axes]\nworkers = [2]\nnetwork = [\"local\"]\n"));
  EXPECT_EQ(expand(threads)[0].trainer_arguments,
            (Arguments{"--config", threads.base_config.string(), "--threads=3"}));
}

TEST_F(SweepConfigTest, GroupsPointsIntoOneArrayPerNodeCountAndNetwork) {
  const SweepConfig c = read_sweep_config(write(kGood));
  const SweepOutput out{dir_ / "out"};
  const std::vector<ArrayJob> arrays = plan_arrays(expand(c), out, "stamp", kDefaultMaxArraySize);
  ASSERT_EQ(arrays.size(), 4u);  // {1, 2} nodes x {ethernet, infiniband}
  std::size_t total = 0;
  for (const ArrayJob& a : arrays) {
    total += a.points.size();
    for (const Point& p : a.points) {
      EXPECT_EQ(p.nodes, a.nodes);
      EXPECT_EQ(p.network, a.network);
    }
  }
  EXPECT_EQ(total, 48u);

  const Tools tools{"/opt/sweep", "/opt/train", "/opt/report", "/opt/jobs"};
  write_manifest(arrays[1], out, tools);
  const std::vector<std::string> cmd = array_command(c, arrays[1], out, tools, "");
  EXPECT_EQ(cmd[0], "sbatch");
  EXPECT_NE(
      std::find(cmd.begin(), cmd.end(), "--array=0-" + std::to_string(arrays[1].points.size() - 1)),
      cmd.end());
  EXPECT_NE(std::find(cmd.begin(), cmd.end(), "--nodes=" + std::to_string(arrays[1].nodes)),
            cmd.end());
  EXPECT_EQ(cmd.back(), "/opt/jobs/network/profile.sh");
  // A timing sweep takes its nodes alone unless the config says otherwise.
  EXPECT_NE(std::find(cmd.begin(), cmd.end(), "--exclusive"), cmd.end());
  SweepConfig shared = c;
  shared.slurm.exclusive = false;
  const std::vector<std::string> shared_cmd = array_command(shared, arrays[1], out, tools, "");
  EXPECT_EQ(std::find(shared_cmd.begin(), shared_cmd.end(), "--exclusive"), shared_cmd.end());
  const std::vector<std::string> step = read_manifest_task(arrays[1].manifest, 2);
  EXPECT_EQ(step, step_arguments(arrays[1].points[2], out, tools));
  // Its own database and checkpoints, resumed from when the task runs again.
  const std::vector<std::string> tail(step.end() - 3, step.end());
  const Point& point = arrays[1].points[2];
  EXPECT_EQ(tail, (std::vector<std::string>{"--db=" + out.database(point).string(),
                                            "--checkpoint-dir=" + out.checkpoints(point).string(),
                                            "--resume=auto"}));
  EXPECT_THROW(read_manifest_task(arrays[1].manifest, 1000), SweepError);
}

// MaxArraySize 5, as the cluster in a box runs it in the split-array test: each (nodes, network)
// group becomes arrays of at most 5 tasks, indices 0..n-1, every point in exactly one of them.
TEST_F(SweepConfigTest, SplitsEachGroupIntoArraysTheClusterAccepts) {
  const SweepConfig c = read_sweep_config(write(kGood));
  const SweepOutput out{dir_ / "out"};
  const std::vector<Point> points = expand(c);
  const std::vector<ArrayJob> arrays = plan_arrays(points, out, "stamp", 5);
  // Per network: 8 points on 1 node (workers 4) -> 4 + 4; 16 on 2 nodes (6, 8) -> 4 x 4.
  ASSERT_EQ(arrays.size(), 12u);
  std::vector<std::size_t> sizes;
  std::set<std::string> ids, manifests;
  for (const ArrayJob& a : arrays) {
    sizes.push_back(a.points.size());
    EXPECT_LE(a.points.size(), 5u);
    EXPECT_EQ(a.parts, a.nodes == 1 ? 2u : 4u);
    for (const Point& p : a.points) {
      EXPECT_EQ(p.nodes, a.nodes);
      EXPECT_EQ(p.network, a.network);
      EXPECT_TRUE(ids.insert(p.id).second) << p.id << " in two arrays";
    }
    manifests.insert(a.manifest.string());
  }
  EXPECT_EQ(sizes, std::vector<std::size_t>(12, 4));
  EXPECT_EQ(ids.size(), points.size());
  EXPECT_EQ(manifests.size(), arrays.size());
  EXPECT_EQ(arrays[0].part, 1u);
  EXPECT_EQ(arrays[1].part, 2u);
  EXPECT_EQ(arrays[1].nodes, arrays[0].nodes);
  EXPECT_EQ(arrays[1].network, arrays[0].network);

  // A later part's tasks are again 0..n-1, each reading its own point from its own manifest.
  const Tools tools{"/opt/sweep", "/opt/train", "/opt/report", "/opt/jobs"};
  const ArrayJob& second = arrays[1];
  write_manifest(second, out, tools);
  const std::vector<std::string> cmd = array_command(c, second, out, tools, "");
  EXPECT_NE(std::find(cmd.begin(), cmd.end(), "--array=0-3"), cmd.end());
  EXPECT_NE(std::find(cmd.begin(), cmd.end(), second.manifest.string()), cmd.end());
  for (std::size_t t = 0; t < second.points.size(); ++t) {
    EXPECT_EQ(read_manifest_task(second.manifest, static_cast<long>(t)),
              step_arguments(second.points[t], out, tools));
  }
  EXPECT_THROW(read_manifest_task(second.manifest, 4), SweepError);
}

// check-data: one check task per data set the points read (points that read the same files
// share one), each the point's own command line and --check-data on a node's cores, no GPU; the
// points' arrays wait for it to succeed and are cancelled when it fails.
TEST_F(SweepConfigTest, ChecksEachDataSetOnceBeforeThePointsStart) {
  const SweepConfig c = read_sweep_config(
      write("[sweep]\nname = \"x\"\nconfig = \"base.toml\"\ncheck-data = true\n"
            "[slurm]\ntasks-per-node = 4\ncpus-per-task = 2\ngpus-per-node = 4\n"
            "[train]\ndataset = \"csv\"\n"
            "[axes]\nalgo = [\"dense\", \"gtopk\"]\ndata-path = [\"/d/a.csv\", \"/d/b.csv\"]\n"
            "workers = [4]\nnetwork = [\"ethernet\"]\n"));
  EXPECT_TRUE(c.check_data);
  std::vector<Point> points = expand(c);
  ASSERT_EQ(points.size(), 4u);
  for (Point& p : points) p.data_set = data_set_read(parse_point(p.trainer_arguments));
  const SweepOutput out{dir_ / "out"};
  const CheckJob check = plan_check(points, out, "stamp");
  ASSERT_EQ(check.points.size(), 2u);
  EXPECT_EQ(check.points[0].id, points[0].id);  // dense, a.csv
  EXPECT_EQ(check.points[1].id, points[1].id);  // dense, b.csv
  EXPECT_NE(check.points[0].data_set, check.points[1].data_set);

  const Tools tools{"/opt/sweep", "/opt/train", "/opt/report", "/opt/jobs"};
  write_check_manifest(check, c, tools);
  std::vector<std::string> step = {"--ntasks=1", "--cpus-per-task=8", "/opt/train"};
  step.insert(step.end(), points[1].trainer_arguments.begin(), points[1].trainer_arguments.end());
  step.push_back("--check-data");
  EXPECT_EQ(read_manifest_task(check.manifest, 1), step);

  const std::vector<std::string> cmd = check_command(c, check, out, tools);
  for (const char* expected : {"--array=0-1", "--nodes=1", "--ntasks=1", "--cpus-per-task=8",
                               "/opt/jobs/templates/sweep-check.sbatch"}) {
    EXPECT_NE(std::find(cmd.begin(), cmd.end(), expected), cmd.end()) << expected;
  }
  EXPECT_EQ(std::count_if(cmd.begin(), cmd.end(),
                          [](const std::string& a) { return a.starts_with("--gpus"); }),
            0);
  EXPECT_EQ(cmd.back(), check.manifest.string());

  const std::vector<ArrayJob> arrays = plan_arrays(points, out, "stamp", kDefaultMaxArraySize);
  const std::vector<std::string> waits = array_command(c, arrays[0], out, tools, "1234");
  EXPECT_NE(std::find(waits.begin(), waits.end(), "--dependency=afterok:1234"), waits.end());
  EXPECT_NE(std::find(waits.begin(), waits.end(), "--kill-on-invalid-dep=yes"), waits.end());
  const std::vector<std::string> alone = array_command(c, arrays[0], out, tools, "");
  EXPECT_EQ(std::count_if(alone.begin(), alone.end(),
                          [](const std::string& a) { return a.starts_with("--dependency"); }),
            0);

  // A generated data set has no files to read: nothing to check.
  std::vector<Point> synthetic = expand(read_sweep_config(write(kGood)));
  for (Point& p : synthetic) p.data_set = data_set_read(parse_point(p.trainer_arguments));
  EXPECT_TRUE(plan_check(synthetic, out, "stamp").points.empty());

  EXPECT_THROW(
      read_sweep_config(write("[sweep]\nname = \"x\"\nconfig = \"base.toml\"\ncheck-data = 1\n"
                              "[axes]\nworkers = [2]\nnetwork = [\"local\"]\n")),
      SweepError);
}

// A sweep that asks Slurm for GPUs trains on them: the point that names no device (auto, the
// default, which falls back to the CPU where commsgd-train lacks CUDA) gets --device=cuda in the
// step its task runs, beside the sbatch request for the GPUs; cuda or cuda:N, from an axis or the
// base config, is kept. A sweep without GPUs is left to auto.
TEST_F(SweepConfigTest, AGpuSweepTrainsOnTheGpus) {
  std::string gpus = kGood;
  gpus.insert(gpus.find("[axes]"), "gpus-per-node = 4\n");  // in [slurm]
  const SweepConfig c = read_sweep_config(write(gpus));
  EXPECT_EQ(c.slurm.gpus_per_node, 4);
  std::vector<Point> points = expand(c);
  for (Point& p : points) EXPECT_EQ(train_on_requested_gpus(p, "auto", c.slurm), "cuda");
  EXPECT_EQ(points[0].trainer_arguments.back(), "--device=cuda");
  const SweepOutput out{dir_ / "out"};
  const Tools tools{"/opt/sweep", "/opt/train", "/opt/report", "/opt/jobs"};
  const std::vector<ArrayJob> arrays = plan_arrays(points, out, "stamp", kDefaultMaxArraySize);
  const std::vector<std::string> cmd = array_command(c, arrays[0], out, tools, "");
  EXPECT_NE(std::find(cmd.begin(), cmd.end(), "--gpus-per-node=4"), cmd.end());
  write_manifest(arrays[0], out, tools);
  for (std::size_t t = 0; t < arrays[0].points.size(); ++t) {
    const std::vector<std::string> step =
        read_manifest_task(arrays[0].manifest, static_cast<long>(t));
    EXPECT_EQ(std::count(step.begin(), step.end(), "--device=cuda"), 1) << "task " << t;
  }

  // A GPU the point names itself (cuda:N, from an axis or the base config) stays, and nothing is
  // added.
  Point base_cuda = expand(c)[0];
  const std::vector<std::string> before = base_cuda.trainer_arguments;
  EXPECT_EQ(train_on_requested_gpus(base_cuda, "cuda:1", c.slurm), "cuda:1");
  EXPECT_EQ(base_cuda.trainer_arguments, before);

  // Without GPUs, auto stays auto: each task takes a GPU only if it finds one.
  Point cpu_sweep = expand(read_sweep_config(write(kGood)))[0];
  const std::vector<std::string> unchanged = cpu_sweep.trainer_arguments;
  EXPECT_EQ(train_on_requested_gpus(cpu_sweep, "auto", SlurmResources{}), "auto");
  EXPECT_EQ(cpu_sweep.trainer_arguments, unchanged);
}

// Asking for GPUs while training on the CPU is refused with one line naming the point, the GPUs
// and the device: a CPU device from the base config or an axis, or auto from an axis (which could
// fall back to the CPU).
TEST_F(SweepConfigTest, AGpuSweepOnTheCpuIsRefused) {
  std::string gpus = kGood;
  gpus.insert(gpus.find("[axes]"), "gpus-per-node = 4\n");
  gpus += "device = [\"cpu\", \"auto\"]\n";  // in [axes]
  const SweepConfig c = read_sweep_config(write(gpus));
  for (Point p : expand(c)) {
    const std::string device = p.id.find("device-cpu") != std::string::npos ? "cpu" : "auto";
    try {
      train_on_requested_gpus(p, device, c.slurm);
      ADD_FAILURE() << "accepted " << p.id;
    } catch (const SweepError& e) {
      const std::string expected = "point " + p.id +
                                   ": slurm.gpus-per-node = 4 asks for GPUs, but it trains with "
                                   "--device " +
                                   device + "; ";
      EXPECT_TRUE(std::string(e.what()).starts_with(expected)) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  // The base config's cpu: the point names no device, commsgd-train reads cpu from the file.
  Point from_base = expand(read_sweep_config(write(kGood)))[0];
  EXPECT_THROW(train_on_requested_gpus(from_base, "cpu", c.slurm), SweepError);
}

TEST(SplitSizes, AsFewArraysAsPossibleOfEvenSizesNoneAboveTheLimit) {
  using Sizes = std::vector<std::size_t>;
  EXPECT_EQ(split_sizes(3000, 1001), (Sizes{1000, 1000, 1000}));
  EXPECT_EQ(split_sizes(1001, 1001), (Sizes{1001}));
  EXPECT_EQ(split_sizes(1002, 1001), (Sizes{501, 501}));
  EXPECT_EQ(split_sizes(16, 5), (Sizes{4, 4, 4, 4}));
  EXPECT_EQ(split_sizes(7, 3), (Sizes{3, 2, 2}));
  EXPECT_EQ(split_sizes(3, 1), (Sizes{1, 1, 1}));
  EXPECT_EQ(split_sizes(4, 1001), (Sizes{4}));
  EXPECT_EQ(split_sizes(0, 5), Sizes{});
  EXPECT_THROW(split_sizes(3, 0), SweepError);
  for (std::size_t tasks : {1u, 999u, 1001u, 2003u, 6000u, 10007u}) {
    const Sizes sizes = split_sizes(tasks, 1001);
    EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), std::size_t{0}), tasks);
    EXPECT_EQ(sizes.size(), (tasks + 1000) / 1001);
    EXPECT_LE(*std::max_element(sizes.begin(), sizes.end()), 1001u);
    EXPECT_LE(sizes.front() - sizes.back(), 1u);
  }
}

// --array: indices 0..n-1, then the throttle. Slurm accepts indices up to MaxArraySize - 1.
TEST_F(SweepConfigTest, ThrottlesEachArrayWithMaxRunning) {
  EXPECT_EQ(array_spec(4, 0), "0-3");
  EXPECT_EQ(array_spec(1, 0), "0-0");
  EXPECT_EQ(array_spec(1001, 0), "0-1000");
  EXPECT_EQ(array_spec(1000, 16), "0-999%16");

  EXPECT_EQ(read_sweep_config(write(kGood)).slurm.max_running, 0);  // no throttle unless asked
  std::string throttled = kGood;
  throttled.insert(throttled.find("[axes]"), "max-running = 3\n");  // in [slurm]
  const SweepConfig c = read_sweep_config(write(throttled));
  EXPECT_EQ(c.slurm.max_running, 3);
  const SweepOutput out{dir_ / "out"};
  const Tools tools{"/opt/sweep", "/opt/train", "/opt/report", "/opt/jobs"};
  for (const ArrayJob& a : plan_arrays(expand(c), out, "stamp", 5)) {
    const std::vector<std::string> cmd = array_command(c, a, out, tools, "");
    const std::string spec = fmt::format("--array=0-{}%3", a.points.size() - 1);
    EXPECT_NE(std::find(cmd.begin(), cmd.end(), spec), cmd.end()) << spec;
  }
}

TEST(MergeCommand, DependsOnEveryArray) {
  SweepConfig c;
  c.name = "demo";
  const SweepOutput out{"/sweeps/demo"};
  const Tools tools{"/opt/sweep", "/opt/train", "/opt/report", "/opt/jobs"};
  const std::vector<std::string> cmd = merge_command(c, out, tools, {"11", "12", "13"}, false);
  EXPECT_NE(std::find(cmd.begin(), cmd.end(), "--dependency=afterany:11:12:13"), cmd.end());
  EXPECT_EQ(std::find(cmd.begin(), cmd.end(), "--wait"), cmd.end());
  const std::vector<std::string> one = merge_command(c, out, tools, {"7"}, true);
  EXPECT_NE(std::find(one.begin(), one.end(), "--dependency=afterany:7"), one.end());
  EXPECT_NE(std::find(one.begin(), one.end(), "--wait"), one.end());
}

TEST(ClusterLimits, ReadsMaxArraySizeAndMaxJobCountFromScontrol) {
  const ClusterLimits limits = parse_scontrol_config(
      "Configuration data as of 2026-11-27T07:00:00\n"
      "MaxArraySize            = 5\n"
      "MaxDBDMsgs              = 20008\n"
      "MaxJobCount             = 250000\n"
      "MaxJobId                = 67043328\n");
  EXPECT_EQ(limits.max_array_size.value, 5);
  EXPECT_EQ(limits.max_array_size.from, "scontrol show config");
  EXPECT_EQ(limits.max_job_count.value, 250000);

  // What the text does not say stays at Slurm's default; look-alike keys are not the limits.
  const ClusterLimits partial =
      parse_scontrol_config("MaxArraySizeX = 7\nMaxJobCount = many\nMaxArraySize=12\n");
  EXPECT_EQ(partial.max_array_size.value, 12);
  EXPECT_EQ(partial.max_job_count.value, kDefaultMaxJobCount);
  EXPECT_EQ(partial.max_job_count.from, "Slurm's default");
  EXPECT_EQ(parse_scontrol_config("").max_array_size.value, 1001);
}

TEST_F(SweepConfigTest, RefusesBadConfigsNamingTheProblem) {
  const std::string head = "[sweep]\nname = \"x\"\nconfig = \"base.toml\"\n";
  const std::string axes = "[axes]\nworkers = [2]\nnetwork = [\"local\"]\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"name = \"x\"\n", "unknown section or key 'name'"},
      {"[slurm]\n", "a [sweep] table is required"},
      {head + axes + "[other]\n", "unknown section or key 'other'"},
      {"[sweep]\nname = \"x/y\"\nconfig = \"base.toml\"\n" + axes, "sweep.name"},
      {"[sweep]\nname = \"x\"\nconfig = \"missing.toml\"\n" + axes, "missing.toml does not exist"},
      {"[sweep]\nname = \"x\"\n" + axes, "sweep.config"},
      {head + "[axes]\nnetwork = [\"local\"]\n", "axes.workers is required"},
      {head + "[axes]\nworkers = [2]\n", "axes.network is required"},
      {head + "[axes]\nworkers = [0]\nnetwork = [\"local\"]\n", "'0' is not a positive integer"},
      {head + "[axes]\nworkers = [\"many\"]\nnetwork = [\"local\"]\n", "'many' is not a positive"},
      {head + axes + "algo = []\n", "axes.algo must be a non-empty list"},
      {head + axes + "algo = \"dense\"\n", "axes.algo must be a non-empty list"},
      {head + axes + "seed = [1, 1]\n", "axes.seed lists a value twice"},
      {head + axes + "db = [\"a.sqlite\"]\n", "axes.db: set by the sweep itself"},
      {head + axes + "checkpoint-dir = [\"ck\"]\n", "axes.checkpoint-dir: set by the sweep itself"},
      {head + axes + "x = [[[1]]]\n", "lists may not nest"},
      {head + "[slurm]\ntasks-per-node = 0\n" + axes,
       "slurm.tasks-per-node must be an integer >= 1"},
      {head + "[slurm]\ngpus = 4\n" + axes, "unknown key 'slurm.gpus'"},
      {head + "[slurm]\nextra = [\"-N 2\"]\n" + axes, "slurm.extra"},
      {head + "[slurm]\ntime = 60\n" + axes, "slurm.time must be a string"},
      {head + "[slurm]\nexclusive = \"yes\"\n" + axes, "slurm.exclusive must be true or false"},
      {head + "[slurm]\nmax-running = -1\n" + axes, "slurm.max-running must be an integer >= 0"},
      {head + "[slurm]\nmax-parallel = 4\n" + axes, "slurm.max-parallel is now slurm.max-running"},
      {head + axes + "algo = [\"dense\"\n", "line 7: "},
      {head + axes + "densty = [0.1]\n", "unknown key 'axes.densty': not a commsgd-train option"},
      {head + axes + "[train]\nlrr = 0.1\n", "unknown key 'train.lrr': not a commsgd-train option"},
      {head + axes + "[train]\ndb = \"x.sqlite\"\n", "train.db: set by the sweep itself"},
      {head + axes + "[train]\nworkers = 4\n", "train.workers: also an axis (axes.workers)"},
      {head + axes + "seed = [1, 2]\n[train]\nseed = 3\n", "train.seed: also an axis"},
      {head + axes + "[train]\nmlp-hidden = [[1]]\n", "train.mlp-hidden: lists may not nest"},
      {head + axes + "[train]\nlr = { a = 1 }\n", "train.lr: values must be strings, numbers"},
      {"train = 3\n" + head + axes, "train must be a table"},
      {head + axes + "[algo.sgp]\ntopology = \"ring\"\n",
       "[algo.sgp]: per-algorithm settings need an axes.algo"},
      {head + axes + "algo = [\"sgp\"]\n[algo.spg]\ntopology = \"ring\"\n",
       "[algo.spg]: 'spg' is not among axes.algo's values"},
      {head + axes + "algo = [\"sgp\"]\n[algo]\ntopology = \"ring\"\n",
       "algo.topology must be a table"},
      {head + axes + "algo = [\"sgp\"]\n[algo.sgp]\ntopologyy = \"ring\"\n",
       "unknown key 'algo.sgp.topologyy'"},
      {head + axes + "algo = [\"sgp\"]\n[algo.sgp]\nalgo = \"dense\"\n",
       "algo.sgp.algo: also an axis"},
  };
  for (const auto& [text, message] : cases) {
    try {
      expand(read_sweep_config(write(text)));
      ADD_FAILURE() << "accepted:\n" << text;
    } catch (const SweepError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
          << "expected '" << message << "' in: " << e.what();
    }
  }
}

// The papers ran one worker per machine: the gTop-k paper 32 machines of one GPU, the SGP code one
// process per node of 8 GPUs. The shipped sweeps put one rank on each node, so that every point's
// traffic crosses the network it is labelled with.
TEST(ShippedSweeps, PutOneRankOnEachNode) {
  std::size_t sweeps = 0;
  for (const fs::directory_entry& file :
       fs::directory_iterator(fs::path(COMMSGD_SOURCE_DIR) / "configs" / "sweeps")) {
    const SweepConfig c = read_sweep_config(file.path());
    EXPECT_EQ(c.slurm.tasks_per_node, 1) << file.path();
    for (const Point& p : expand(c)) EXPECT_EQ(p.nodes, p.workers) << p.id;
    ++sweeps;
  }
  EXPECT_GE(sweeps, 4u);
}

// The SGP paper's sweep runs each of the five algorithms the paper compares as the paper config of
// that algorithm has it: sgp and osgp the SGP config, dense that config without its graph (left
// out, and noted), dpsgd and adpsgd the D-PSGD and AD-PSGD configs, through [algo.NAME].
TEST(ShippedSweeps, SgpSweepRunsEachAlgorithmAsItsPaperConfig) {
  const fs::path source(COMMSGD_SOURCE_DIR);
  const SweepConfig c =
      read_sweep_config(source / "configs" / "sweeps" / "sgp-imagenet-resnet50.toml");
  std::set<std::string> algos;
  for (const Point& p : expand(c)) {
    const trainer::Options o = parse_point(p.trainer_arguments);
    algos.insert(o.algo);
    const bool own_config = o.algo == "dpsgd" || o.algo == "adpsgd";
    const fs::path paper = source / "configs" / "papers" / "sgp" /
                           (own_config ? "imagenet-resnet50-" + o.algo + ".toml"
                                       : std::string("imagenet-resnet50.toml"));
    nlohmann::json point = o, want = parse_point({"--config", paper.string()});
    want["algo"] = o.algo;
    if (o.algo == "dense") want["topology"] = "";
    for (nlohmann::json* json : {&point, &want}) json->erase("threads");  // Slurm's share, here
    EXPECT_EQ(point, want) << p.id;
    EXPECT_EQ(o.left_out.size(), o.algo == "dense" ? 1u : 0u) << p.id;
  }
  EXPECT_EQ(algos, (std::set<std::string>{"adpsgd", "dense", "dpsgd", "osgp", "sgp"}));
}

// What --dry-run prints must read back as the same words in a real shell.
TEST(ShellQuote, RoundTripsThroughTheShell) {
  const std::vector<std::string> words = {
      "plain", "with space", "it's", "$(touch x)", "a\"b", "--x=1,2", "", "tab\there", "*"};
  std::string script = "printf '%s\\n'";
  for (const std::string& w : words) script += " " + shell_quote(w);
  const fs::path out = fs::temp_directory_path() / "commsgd-test-shell-quote.txt";
  const std::string command = "/bin/sh -c " + shell_quote(script) + " > " + out.string();
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream in(out);
  for (const std::string& w : words) {
    std::string line;
    ASSERT_TRUE(std::getline(in, line));
    EXPECT_EQ(line, w);
  }
  fs::remove(out);
}

}  // namespace
}  // namespace commsgd::sweep
