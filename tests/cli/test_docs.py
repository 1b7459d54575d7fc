"""The code quoted in the docs is the real code: tools/sync-docs --check finds every
`<!-- code: PATH NAME -->` block in docs/*.md and README.md up to date, and notices a
block that drifted.

    cd tests/cli && /usr/bin/python3 -m unittest -v test_docs
"""
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SYNC_DOCS = REPO / "tools" / "sync-docs"
RING_LINE = "  const int p = comm.size();\n"


class SyncDocsTest(unittest.TestCase):
    def sync_docs(self, *args):
        return subprocess.run([str(SYNC_DOCS), *args], capture_output=True, text=True, timeout=30)

    def copy_of_repo(self):
        """docs/, README.md and src/ copied into a temporary root, for --root."""
        temporary = tempfile.TemporaryDirectory(prefix="collsim-docs-")
        self.addCleanup(temporary.cleanup)
        root = Path(temporary.name)
        shutil.copytree(REPO / "docs", root / "docs")
        shutil.copytree(REPO / "src", root / "src")
        shutil.copy(REPO / "README.md", root / "README.md")
        return root

    def test_quoted_code_is_up_to_date(self):
        run = self.sync_docs("--check")
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_the_ring_is_quoted(self):
        self.assertIn("<!-- code: src/algorithms/allreduce_ring.cpp ring -->\n```cpp\nvoid allreduce_ring(",
                      (REPO / "docs" / "algorithms.md").read_text())

    def test_check_names_a_stale_file_and_changes_nothing(self):
        root = self.copy_of_repo()
        doc = root / "docs" / "algorithms.md"
        stale = doc.read_text().replace(RING_LINE, "  const int p = 4;  // edited by hand\n", 1)
        self.assertNotEqual(stale, doc.read_text())
        doc.write_text(stale)
        run = self.sync_docs("--check", "--root", str(root))
        self.assertEqual(run.returncode, 1)
        self.assertIn("docs/algorithms.md", run.stderr)
        self.assertEqual(doc.read_text(), stale)

    def test_a_changed_source_makes_the_block_stale_until_synced(self):
        root = self.copy_of_repo()
        source = root / "src" / "algorithms" / "allreduce_ring.cpp"
        source.write_text(source.read_text().replace(RING_LINE, RING_LINE + "  // a new comment\n", 1))
        self.assertEqual(self.sync_docs("--check", "--root", str(root)).returncode, 1)
        self.assertEqual(self.sync_docs("--root", str(root)).returncode, 0)
        self.assertEqual(self.sync_docs("--check", "--root", str(root)).returncode, 0)
        self.assertIn(RING_LINE + "  // a new comment\n", (root / "docs" / "algorithms.md").read_text())

    def test_a_missing_marker_is_an_error(self):
        root = self.copy_of_repo()
        source = root / "src" / "algorithms" / "allreduce_ring.cpp"
        source.write_text(source.read_text().replace("// ring-end\n", ""))
        run = self.sync_docs("--check", "--root", str(root))
        self.assertEqual(run.returncode, 2)
        self.assertIn("no '// ring-end' marker", run.stderr)


if __name__ == "__main__":
    unittest.main()
