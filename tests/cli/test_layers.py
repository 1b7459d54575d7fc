"""The folders of src/ include each other one way only (tools/check-layers), and
docs/architecture.md draws the same layers the check enforces; no function grows past
80 lines (tools/check-function-length), no source file past 600 (tools/check-file-length).

    cd tests/cli && /usr/bin/python3 -m unittest -v test_layers
"""
import importlib.machinery
import importlib.util
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECK = REPO / "tools" / "check-layers"
FUNCTION_LENGTH = REPO / "tools" / "check-function-length"
FILE_LENGTH = REPO / "tools" / "check-file-length"


def load_tool(path, name):
    loader = importlib.machinery.SourceFileLoader(name, str(path))
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def load_check():
    return load_tool(CHECK, "check_layers")


class LayersTest(unittest.TestCase):
    def check(self, root=None):
        args = [str(CHECK)] + (["--root", str(root)] if root else [])
        return subprocess.run(args, capture_output=True, text=True, timeout=60)

    def copy_of_src(self):
        temporary = tempfile.TemporaryDirectory(prefix="collsim-layers-")
        self.addCleanup(temporary.cleanup)
        root = Path(temporary.name)
        shutil.copytree(REPO / "src", root / "src")
        return root

    def test_the_tree_is_clean(self):
        run = self.check()
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_an_upward_include_fails_and_names_the_file(self):
        root = self.copy_of_src()
        units = root / "src" / "util" / "units.cpp"
        units.write_text('#include "sim/simulation.hpp"\n' + units.read_text())
        run = self.check(root)
        self.assertEqual(run.returncode, 1)
        self.assertIn("util -> sim includes a higher layer (util/units.cpp)", run.stderr)

    def test_peers_may_not_include_each_other(self):
        root = self.copy_of_src()
        (root / "src" / "viz" / "peer.cpp").write_text('#include "sweep/results.hpp"\n')
        run = self.check(root)
        self.assertEqual(run.returncode, 1)
        self.assertIn("viz -> sweep includes a peer (viz/peer.cpp)", run.stderr)

    def test_a_new_folder_needs_a_layer(self):
        root = self.copy_of_src()
        (root / "src" / "extra").mkdir()
        (root / "src" / "extra" / "x.cpp").write_text('#include "util/units.hpp"\n')
        run = self.check(root)
        self.assertEqual(run.returncode, 1)
        self.assertIn("src/extra/ has no layer", run.stderr)

    def test_a_fixed_known_exception_must_leave_the_list(self):
        check = load_check()
        if not check.KNOWN:
            self.skipTest("no known exceptions left")
        (source, target), _ = next(iter(check.KNOWN.items()))
        root = self.copy_of_src()
        for path in (root / "src" / source).rglob("*"):
            if path.is_file():
                path.write_text("".join(line for line in path.read_text().splitlines(True)
                                        if f'#include "{target}/' not in line))
        run = self.check(root)
        self.assertEqual(run.returncode, 1)
        self.assertIn(f"{source} -> {target} is gone", run.stderr)

    def test_the_architecture_page_lists_the_same_layers(self):
        page = (REPO / "docs" / "architecture.md").read_text()
        for level, folders in enumerate(load_check().LAYERS):
            with self.subTest(level=level):
                self.assertIn(f"| {level} | " + ", ".join(f"`{folder}`" for folder in folders) + " |", page)



class FunctionLengthTest(unittest.TestCase):
    def check(self, root=None, *args):
        command = [str(FUNCTION_LENGTH), *args] + (["--root", str(root)] if root else [])
        return subprocess.run(command, capture_output=True, text=True, timeout=60)

    def tree_with(self, name, text):
        temporary = tempfile.TemporaryDirectory(prefix="collsim-functions-")
        self.addCleanup(temporary.cleanup)
        root = Path(temporary.name)
        shutil.copytree(REPO / "src", root / "src")
        (root / "src" / "util" / name).write_text(text)
        return root

    def test_the_tree_is_clean(self):
        run = self.check()
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_a_long_function_fails_with_its_length(self):
        limit = load_tool(FUNCTION_LENGTH, "check_function_length").LIMIT
        self.assertEqual(limit, 80)
        body = "".join(f"  total += {i};\n" for i in range(limit + 5))
        root = self.tree_with("long.cpp", "int long_one(int total) {\n" + body + "  return total;\n}\n")
        run = self.check(root)
        self.assertEqual(run.returncode, 1)
        self.assertIn(f"util/long.cpp:long_one is {limit + 8} lines (at most {limit})", run.stderr)
        # one line shorter than the limit plus one is fine
        body = "".join(f"  total += {i};\n" for i in range(limit - 3))
        root = self.tree_with("long.cpp", "int long_one(int total) {\n" + body + "  return total;\n}\n")
        self.assertEqual(self.check(root).returncode, 0)

    def test_lambdas_braces_in_strings_and_classes_are_counted_right(self):
        lines = ["struct Box {", "  int get() const {", "    auto add = [&](int x) {", "      return x + 1;", "    };",
                 '    const char* css = "a { b } {";', '    const char* raw = R"~(}})~";', "    return add(1);",
                 "  }", "};", "Box::Box(int v) : v_(v) {", "  if (v) {", "  }", "}"]
        root = self.tree_with("shapes.cpp", "\n".join(lines) + "\n")
        top = self.check(root, "--top", "1000000").stdout  # every function, however big the tree grows
        self.assertRegex(top, r"\n\s+8  util/shapes.cpp:get\n")
        self.assertRegex(top, r"\n\s+4  util/shapes.cpp:Box\n")
        self.assertNotIn("util/shapes.cpp:add", top)


class FileLengthTest(unittest.TestCase):
    def check(self, root=None):
        command = [str(FILE_LENGTH)] + (["--root", str(root)] if root else [])
        return subprocess.run(command, capture_output=True, text=True, timeout=60)

    def test_the_tree_is_clean(self):
        run = self.check()
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_a_long_file_fails_and_one_at_the_limit_passes(self):
        limit = load_tool(FILE_LENGTH, "check_file_length").LIMIT
        self.assertEqual(limit, 600)
        temporary = tempfile.TemporaryDirectory(prefix="collsim-files-")
        self.addCleanup(temporary.cleanup)
        root = Path(temporary.name)
        shutil.copytree(REPO / "src", root / "src")
        (root / "src" / "util" / "long.cpp").write_text("// a line\n" * (limit + 1))
        run = self.check(root)
        self.assertEqual(run.returncode, 1)
        self.assertIn(f"src/util/long.cpp is {limit + 1} lines (at most {limit})", run.stderr)
        (root / "src" / "util" / "long.cpp").write_text("// a line\n" * limit)
        self.assertEqual(self.check(root).returncode, 0, self.check(root).stderr)


if __name__ == "__main__":
    unittest.main()
