#!/usr/bin/python3
"""The commands README.md and docs/usage.md show, run as a reader would copy them.

  doc_commands.py SOURCE_DIR MPIEXEC COMMSGD_TRAIN COMMSGD_REPORT COMMSGD_SWEEP COMMSGD_BENCH

Every line of the docs' ```sh blocks is checked, in order, in a scratch directory laid out as a
checkout with a build in build/release (the programs given), where runs/ holds copies of the
committed databases under results/ as the reader's own runs:

- every command of commsgd-train, -report, -sweep and -bench names subcommands and options that
  the program's --help lists, and every path of the repository a line names exists;
- then the line runs, unless SKIPPED below says why it cannot run here, and must exit 0.
  commsgd-train runs stop after MAX_STEPS iterations: the command line, its config and data are
  all read, and a run is recorded, in seconds.

A sweep config shown in a ```toml block is planned by commsgd-sweep, and the ```sql blocks run on
the runs the commands recorded. The prose is checked too: each `--option` in inline code is one
of the programs' (or of another tool, FOREIGN_OPTIONS), each `commsgd-report SUBCOMMAND` one the
program has, and each path of the repository or link exists. And CITATION.cff's version is the
project's.
"""
import glob
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap

DOCS = ["README.md", "docs/usage.md"]
PROGRAMS = {
    "commsgd-train": "trainer",
    "commsgd-report": "analysis/report",
    "commsgd-sweep": "jobs/sweep",
    "commsgd-bench": "tests/bench",
}
MAX_STEPS = "2"

# The doc lines (as written, without their comment) not run here, and why. Each is still checked
# for its options, subcommands and paths. A line here that the docs no longer have is an error, so
# the list stays what the docs show.
SKIPPED = {
    # Building and the whole test suite: what runs this test.
    "scripts/quickstart.sh": "installs packages as root and builds commsgd: minutes",
    "scripts/test.sh": "builds and runs the whole test suite, this test among it",
    "cmake --preset release": "configures a build",
    "cmake --build --preset release": "a build",
    "ctest --preset release": "the test suite, this test among it",
    "cmake --preset asan && cmake --build --preset asan && ctest --preset asan": "a build",
    "module load openmpi cuda": "a cluster's environment modules",
    "module load gcc cuda openmpi": "a cluster's environment modules",
    "cmake --preset release -DCMAKE_PREFIX_PATH=\"$(python3 -c 'import torch; "
    "print(torch.utils.cmake_prefix_path)')\"": "a build against a pip PyTorch",
    "cmake --preset cuda -DCMAKE_PREFIX_PATH=\"$(python3 -c 'import torch; "
    "print(torch.utils.cmake_prefix_path)')\"": "a CUDA build against a pip PyTorch",
    "cmake --build --preset cuda && ctest --preset gpu": "a CUDA build and a GPU",
    # Slurm: these machines have its client commands but no cluster (ctest -L slurm starts one,
    # as root, for the tests that submit).
    "build/release/jobs/sweep/commsgd-sweep submit configs/sweeps/cifar10-resnet20.toml":
    "submits to Slurm (the dry run before it plans the same jobs)",
    "$S submit configs/sweeps/cifar10-resnet20.toml":
    "submits to Slurm (the dry run before it plans the same jobs)",
    "srun --mpi=pmix commsgd-train --config configs/digits.toml --lr 0.1": "needs Slurm (srun)",
    "sbatch jobs/templates/train.sbatch configs/papers/gtopk/cifar10-resnet20.toml --algo gtopk":
    "submits to Slurm",
    "COMMSGD_PROFILE=infiniband sbatch jobs/templates/train.sbatch configs/digits.toml":
    "submits to Slurm",
    # The cluster in a box: root, Slurm's daemons and network namespaces (ctest -L slurm and
    # -L network run these).
    "dir=$(jobs/local/slurm.sh start)": "starts Slurm's daemons, as root",
    "export SLURM_CONF=$dir/slurm.conf": "the Slurm started above",
    "build/release/jobs/sweep/commsgd-sweep submit --wait tests/cluster/tiny-sweep.toml":
    "submits to the Slurm started above",
    'jobs/local/slurm.sh stop "$dir"': "the Slurm started above",
    "jobs/local/launch.sh -n 4 --network emulated:1gbit -- build/release/trainer/commsgd-train "
    "--config configs/digits.toml --algo gtopk --density 0.001": "emulated hosts, as root",
    "jobs/local/launch.sh -n 2 --network emulated:100mbit -- "
    "build/release/tests/bench/commsgd-bench pingpong --network emulated:100mbit":
    "emulated hosts, as root",
    # Containers (ctest -L container builds the CPU image and runs these in it).
    "podman build -t commsgd:cpu .": "builds the container image: many minutes",
    "podman run --rm commsgd:cpu ctest --test-dir /opt/commsgd/src/build/release -L unit":
    "needs the container image",
    "podman run --rm commsgd:cpu mpirun -np 4 commsgd-train --config "
    "/opt/commsgd/share/commsgd/configs/digits.toml --algo gtopk --density 0.001":
    "needs the container image",
    # Measurements, meant to have the machine to themselves; ctest -L bench runs short ones.
    "build/release/tests/bench/commsgd-bench trainer-overhead": "a measurement",
    "build/release/tests/bench/commsgd-bench kernels": "a measurement",
    "for P in 2 4 8; do mpirun -np $P build/release/tests/bench/commsgd-bench collectives; done":
    "a measurement",
    "mpirun -np 2 build/release/tests/bench/commsgd-bench pingpong": "a measurement",
    "build/release/tests/bench/commsgd-bench merge": "a measurement",
    "mpirun -np 2 build/release/tests/bench/commsgd-bench dense-overlap": "a measurement",
    "build/release/tests/bench/commsgd-bench gpu-kernels": "a measurement, on a GPU",
    "mpirun -np 2 build/release/tests/bench/commsgd-bench pingpong --network ethernet "
    "--db runs/bench.sqlite": "a measurement",
    "build/release/tests/bench/commsgd-bench merge --db runs/bench.sqlite": "a measurement",
    # Data only a cluster makes: none of the committed runs is one of these.
    "$R compare runs/*.sqlite --model resnet20 --workers 32 --target 0.9":
    "needs ResNet-20 runs at 32 workers",
    "$R simulate scaling runs/*.sqlite --link-of ethernet":
    "needs a pingpong calibration of the network ethernet, which the measurement above records",
}

# Doc lines that run only where what they need is installed: the line, and the Python module.
NEEDS_MODULE = {
    "$R plot convergence results/sweep.sqlite -o convergence.png": "matplotlib",
}

# Subcommands that only some builds have, with the source that declares them.
BUILD_DEPENDENT_SUBCOMMANDS = {("commsgd-bench", "gpu-kernels"): "tests/bench/gpu_kernels.cpp"}

# Long options the prose gives to programs other than commsgd's, with where each is declared when
# that is in this repository (checked to be there), or the outside program.
FOREIGN_OPTIONS = {
    "--channels": "tools/export_torchscript.py",
    "--height": "tools/export_torchscript.py",
    "--width": "tools/export_torchscript.py",
    "--cpus": "jobs/local/slurm.sh",
    "--local-steps": "examples/local_sgd/local_sgd.cpp",
    "--install": "cmake",
    "--prefix": "cmake",
    "--test-dir": "ctest",
    "--mpi": "srun",
    "--container-image": "srun with pyxis",
    "--container-mounts": "srun with pyxis",
    "--nv": "apptainer",
}

# Files the prose names that runs and builds write, with the source that names them.
OUTPUTS = {
    "build/quickstart/digits.sqlite": ("scripts/quickstart.sh", "out=build/quickstart"),
    "build/cuda": ("CMakePresets.json", '"name": "cuda"'),
    "build/cuda/trainer/commsgd-train": ("trainer/CMakeLists.txt", "commsgd-train"),
    "build/cuda/jobs/sweep/commsgd-sweep": ("jobs/sweep/CMakeLists.txt", "commsgd-sweep"),
    "results/bench.sqlite": ("tests/bench/pingpong.cpp", '"results/bench.sqlite"'),
}

# Options whose value is a file or folder the command writes: it need not exist before.
OUTPUT_OPTIONS = ("-o", "--output", "--db", "--db-dir", "--dump-params", "--checkpoint-dir")

# Programs besides commsgd's that doc lines run here.
OTHER_PROGRAMS = ("sqlite3",)

REPO_DIRS = ("algorithms", "analysis", "build", "cmake", "common", "configs", "docs", "examples",
             "jobs", "kernels", "results", "scripts", "tests", "tools", "trainer")
PATH_PATTERN = re.compile(r"(?<![\w./-])((?:%s)/[\w./*+-]*[\w*])" % "|".join(REPO_DIRS))

failures = []


def fail(message):
    failures.append(message)
    print(f"FAIL: {message}", flush=True)


class Help:
    """What each program and subcommand's --help lists: options and subcommands."""

    def __init__(self, paths):
        self.paths = paths
        self.cache = {}

    def of(self, program, chain):
        key = (program, tuple(chain))
        if key not in self.cache:
            result = subprocess.run([self.paths[program], *chain, "--help"], capture_output=True,
                                    text=True, timeout=60)
            if result.returncode != 0:
                sys.exit(f"{named(program, chain)} --help: exit {result.returncode}")
            options, subcommands, section = set(), [], None
            for line in result.stdout.splitlines():
                if re.match(r"^\S.*:$", line):
                    section = line
                elif section == "Subcommands:" and re.match(r"^  [a-z]", line):
                    subcommands.append(line.split()[0])
                elif re.match(r"^  -", line):
                    options.update(line.split()[0].split(","))
            self.cache[key] = (options, subcommands)
        return self.cache[key]

    def every_option(self, program, chain=()):
        options, subcommands = self.of(program, list(chain))
        for sub in subcommands:
            options = options | self.every_option(program, (*chain, sub))
        return options


def fenced_blocks(source, kind):
    """(doc, line number, text) of each of the docs' blocks fenced as ```KIND."""
    for doc in DOCS:
        with open(os.path.join(source, doc), encoding="utf-8") as f:
            text = f.read()
        for match in re.finditer(r"^[ \t]*```%s\n(.*?)^[ \t]*```" % kind, text, flags=re.S | re.M):
            yield doc, text.count("\n", 0, match.start()) + 1, match.group(1)


def doc_lines(source):
    """(doc, line number, text) of each command of the docs' sh blocks: continuation lines joined,
    the comment after a command and comment lines left out, runs of spaces made one (as SKIPPED
    spells the lines)."""
    for doc, fence, block in fenced_blocks(source, "sh"):
        pending, start = "", 0
        for offset, raw in enumerate(block.splitlines(), 1):
            line = raw.strip()
            if not pending:
                start = fence + offset
            if line.endswith("\\"):
                pending += line[:-1].strip() + " "
                continue
            text = re.sub(r"(^|\s)#(\s.*)?$", "", pending + line).strip()
            pending = ""
            if text:
                yield doc, start, re.sub(r"\s+", " ", text)


def simple_commands(text):
    """The line's simple commands, as word lists (`;`, `&&`, `||` and `|` separate them)."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    commands, words = [], []
    for token in lexer:
        if token in (";", "&&", "||", "|"):
            commands.append(words)
            words = []
        else:
            words.append(token)
    return commands + [words] if words else commands


def is_assignment(words):
    """NAME=VALUE alone, which the lines after it read as $NAME (not one set from $(...))."""
    return len(words) == 1 and re.match(r"^\w+=[^$]*$", words[0]) is not None


def expand(word, variables):
    return re.sub(r"\$\{?(\w+)\}?", lambda m: variables.get(m.group(1), m.group(0)), word)


def program_index(words):
    for i, word in enumerate(words):
        if not re.match(r"^\w+=", word) and os.path.basename(word) in PROGRAMS:
            return i
    return None


def named(program, chain):
    return " ".join([program, *chain])


def check_command_line(words, help_, source, where):
    """Subcommands and options of a commsgd program's words: those its --help lists."""
    at = program_index(words)
    if at is None:
        return
    program = os.path.basename(words[at])
    chain, rest = [], words[at + 1:]
    while rest:
        subcommands = help_.of(program, chain)[1]
        declared = BUILD_DEPENDENT_SUBCOMMANDS.get((program, rest[0]))
        if declared and rest[0] not in subcommands:
            with open(os.path.join(source, declared), encoding="utf-8") as f:
                if f'"{rest[0]}"' not in f.read():
                    fail(f"{where}: {declared} declares no subcommand {rest[0]}")
            return  # not in this build: its options cannot be looked up
        if rest[0] not in subcommands:
            break
        chain.append(rest.pop(0))
    options, subcommands = help_.of(program, chain)
    if subcommands:
        given = rest[0] if rest else "(none given)"
        fail(f"{where}: {named(program, chain)} has no subcommand {given}; it has "
             f"{', '.join(subcommands)}")
        return
    for word in rest:
        if re.match(r"^--?[A-Za-z]", word):
            name = word.split("=", 1)[0]
            if name not in options:
                fail(f"{where}: {named(program, chain)} has no option {name}")


def written(commands):
    """The paths a line's commands write, by their output options."""
    paths = set()
    for words in commands:
        for option, value in zip(words, words[1:]):
            if option in OUTPUT_OPTIONS:
                paths.add(value)
        paths.update(w.split("=", 1)[1] for w in words if w.split("=", 1)[0] in OUTPUT_OPTIONS
                     and "=" in w)
    return paths


def check_paths(text, work, where, outputs=()):
    """Each path of the repository that `text` names is in the scratch checkout (made by a command
    before, or one of `outputs` or OUTPUTS)."""
    for path in PATH_PATTERN.findall(text):
        if path in outputs:
            continue
        if "*" in path:
            if not glob.glob(path, root_dir=work):
                fail(f"{where}: nothing matches {path}")
        elif not os.path.lexists(os.path.join(work, path)) and path not in OUTPUTS:
            fail(f"{where}: {path} does not exist")


def runnable(commands):
    """Whether every simple command is an assignment, or a commsgd program or one of
    OTHER_PROGRAMS, by itself or under mpirun."""
    for words in commands:
        if is_assignment(words):
            continue
        at = program_index(words)
        if at is None:
            at = next((i for i, w in enumerate(words) if w in OTHER_PROGRAMS), None)
        if at is None:
            return False
        prefix = [w for w in words[:at] if not re.match(r"^\w+=", w)]
        if prefix and prefix[0] != "mpirun":
            return False
    return True


def run(commands, variables, work, env, where):
    """Runs a line's commands in the scratch checkout, as bash would expand their variables and
    globs; commsgd-train stops after MAX_STEPS iterations."""
    for words in commands:
        if is_assignment(words):
            continue  # check_sh_blocks keeps the variables
        words = [expand(w, variables) for w in words]
        unresolved = [w for w in words if "$" in w]
        if unresolved:
            fail(f"{where}: unknown variable in {unresolved[0]}")
            return
        argv = []
        for word in words:
            matches = (sorted(glob.glob(word, root_dir=work))
                       if re.match(r"^[\w./*?-]+$", word) and re.search(r"[*?]", word) else [])
            argv.extend(matches or [word])
        at = program_index(argv)
        if at is not None and os.path.basename(argv[at]) == "commsgd-train":
            if "--max-steps" not in argv:
                argv += ["--max-steps", MAX_STEPS]
        run_env = dict(env)
        while argv and re.match(r"^\w+=", argv[0]):
            name, value = argv.pop(0).split("=", 1)
            run_env[name] = value
        result = subprocess.run(argv, cwd=work, env=run_env, capture_output=True, text=True,
                                timeout=120)
        if result.returncode != 0:
            output = (result.stdout + result.stderr).strip().splitlines()
            fail(f"{where}: exit {result.returncode}: {shlex.join(argv)}\n  " +
                 "\n  ".join(output[-15:]))
            return


def scratch_checkout(source, work, paths, mpiexec):
    """A checkout as the docs' commands expect one: the source's folders (results/ one of its own,
    for what the commands write there; nothing of the source's own runs), the programs under
    build/release and on PATH, and the committed databases in runs/ as a reader's runs."""
    for entry in REPO_DIRS:
        if entry not in ("build", "results"):
            os.symlink(os.path.join(source, entry), os.path.join(work, entry))
    os.mkdir(os.path.join(work, "results"))
    for entry in os.listdir(os.path.join(source, "results")):
        os.symlink(os.path.join(source, "results", entry), os.path.join(work, "results", entry))
    bin_dir = os.path.join(work, ".bin")
    os.mkdir(bin_dir)
    for program, path in paths.items():
        built = os.path.join(work, "build", "release", PROGRAMS[program], program)
        os.makedirs(os.path.dirname(built), exist_ok=True)
        os.symlink(path, built)
        os.symlink(path, os.path.join(bin_dir, program))
    os.symlink(mpiexec, os.path.join(bin_dir, "mpirun"))
    os.mkdir(os.path.join(work, "runs"))
    for database in sorted(glob.glob("results/*/*.sqlite", root_dir=source)):
        copy = os.path.join(work, "runs", database.split("/", 1)[1].replace("/", "-"))
        shutil.copyfile(os.path.join(source, database), copy)
    env = dict(os.environ)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    # mpirun -np 4 as the docs write it, on a machine with fewer cores, and as root in CI.
    env.update(OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def check_sh_blocks(source, work, help_, env):
    variables, seen = {}, set()
    for doc, number, text in doc_lines(source):
        where = f"{doc}:{number}"
        commands = simple_commands(text)
        expanded = [[expand(w, variables) for w in words] for words in commands]
        for words in expanded:
            check_command_line(words, help_, source, where)
        check_paths(expand(text, variables), work, where, written(expanded))
        module = NEEDS_MODULE.get(text)
        if text in SKIPPED:
            seen.add(text)
            print(f"skipped ({SKIPPED[text]}): {text}")
        elif module and importlib.util.find_spec(module) is None:
            print(f"skipped (no {module} here): {text}")
        elif any(p in text.split() and shutil.which(p) is None for p in OTHER_PROGRAMS):
            print(f"skipped (a program it runs is not installed here): {text}")
        elif not runnable(expanded):
            fail(f"{where}: cannot run `{text}` here: add it to SKIPPED with the reason")
        else:
            before = len(failures)
            run(commands, variables, work, env, where)
            if len(failures) == before:
                print(f"ok: {text}")
        # Assignments hold for the lines after them, run or not.
        for words in commands:
            if is_assignment(words):
                name, value = words[0].split("=", 1)
                variables[name] = value
    for text in sorted(set(SKIPPED) - seen):
        fail(f"SKIPPED lists a line the docs no longer have: {text}")


def check_other_blocks(source, work, env, paths):
    """A sweep config the docs show (```toml with a [sweep]) is one commsgd-sweep plans, from
    configs/sweeps/ as its relative base config says; their SQL runs on the runs the docs' commands
    recorded."""
    sweeps = os.path.join(work, ".doc-sweeps")
    os.makedirs(os.path.join(sweeps, "sweeps"))
    os.symlink(os.path.join(source, "configs", "papers"), os.path.join(sweeps, "papers"))
    for doc, number, text in fenced_blocks(source, "toml"):
        if not re.search(r"^\s*\[sweep\]", text, flags=re.M):
            continue
        config = os.path.join(sweeps, "sweeps", f"{number}.toml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text))
        result = subprocess.run([paths["commsgd-sweep"], "submit", "--dry-run", config, "--output",
                                 os.path.join(sweeps, f"out-{number}")], cwd=work, env=env,
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            fail(f"{doc}:{number}: the sweep config is refused: {result.stderr.strip()}")
        else:
            print(f"ok: the sweep config at {doc}:{number}")
    if shutil.which("sqlite3") is None:
        return
    for doc, number, text in fenced_blocks(source, "sql"):
        result = subprocess.run(["sqlite3", "runs.sqlite"], input=text, cwd=work, env=env,
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0 or result.stderr:
            fail(f"{doc}:{number}: the query fails on runs.sqlite: {result.stderr.strip()}")
        else:
            print(f"ok: the query at {doc}:{number}")


def prose(source):
    """(doc, text) of each doc without its fenced blocks and the generated option lists."""
    for doc in DOCS:
        with open(os.path.join(source, doc), encoding="utf-8") as f:
            text = f.read().split("<!-- BEGIN --help -->")[0]
        yield doc, re.sub(r"^\s*```.*?^\s*```", "", text, flags=re.S | re.M)


def check_prose(source, work, help_):
    options = set()
    for program in PROGRAMS:
        options |= help_.every_option(program)
    for name, owner in FOREIGN_OPTIONS.items():
        if os.path.isfile(os.path.join(source, owner)):
            with open(os.path.join(source, owner), encoding="utf-8") as f:
                if name not in f.read():
                    fail(f"FOREIGN_OPTIONS: {owner} has no {name}")
    for path, (writer, name) in OUTPUTS.items():
        with open(os.path.join(source, writer), encoding="utf-8") as f:
            if name not in f.read():
                fail(f"OUTPUTS: {writer} does not write {path}")
    for doc, text in prose(source):
        for span in re.findall(r"`([^`]+)`", text):
            for name in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", span):
                if name not in options and name not in FOREIGN_OPTIONS:
                    fail(f"{doc}: `{span}`: no program has {name}")
            for program, words in re.findall(r"\b(commsgd-(?:report|sweep|bench)) ([a-z][\w -]*)",
                                             span):
                chain = []
                for word in words.split():
                    subcommands = help_.of(program, chain)[1]
                    if not subcommands:
                        break
                    if word not in subcommands and (program, word) not in \
                            BUILD_DEPENDENT_SUBCOMMANDS:
                        fail(f"{doc}: `{span}`: {named(program, chain)} has no subcommand {word}")
                        break
                    chain.append(word)
            if not re.search(r"[<>{}$]", span):
                check_paths(span, work, f"{doc}: `{span}`")
        for link in re.findall(r"\]\(([^)#\s]+)", text):
            if not re.match(r"^[a-z]+:", link) and \
                    not os.path.exists(os.path.join(source, os.path.dirname(doc), link)):
                fail(f"{doc}: the link {link} leads nowhere")


def check_citation(source):
    with open(os.path.join(source, "CMakeLists.txt"), encoding="utf-8") as f:
        project = re.search(r"project\(commsgd VERSION (\S+)", f.read()).group(1)
    with open(os.path.join(source, "CITATION.cff"), encoding="utf-8") as f:
        cited = re.search(r"^version: (\S+)$", f.read(), flags=re.M)
    if not cited or cited.group(1) != project:
        fail(f"CITATION.cff's version is not the project's {project}")


def main():
    if len(sys.argv) != 7:
        sys.exit(__doc__.splitlines()[2].strip())
    source, mpiexec = os.path.abspath(sys.argv[1]), sys.argv[2]
    paths = dict(zip(PROGRAMS, (os.path.abspath(p) for p in sys.argv[3:])))
    help_ = Help(paths)
    with tempfile.TemporaryDirectory(prefix="commsgd-doc-commands.") as work:
        env = scratch_checkout(source, work, paths, mpiexec)
        check_sh_blocks(source, work, help_, env)
        check_other_blocks(source, work, env, paths)
        check_prose(source, work, help_)
    check_citation(source)
    if failures:
        sys.exit(f"{len(failures)} doc problem(s); the first: {failures[0]}")
    print("ok: the docs' commands are what the programs do")


if __name__ == "__main__":
    main()
