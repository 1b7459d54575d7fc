"""The HTML report in a real browser (Debian's headless Chromium, driven over the DevTools
pipe by headless_chromium.py): it opens without console errors and without the network,
its screenshot shows the timeline (pixels of the phase colours inside the timeline's box),
the step controls change what the step-through shows, and it prints.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest -v test_report_html
"""
import json
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

from headless_chromium import Browser, decode_png, find_chromium

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
COLLSIM = os.environ.get("COLLSIM", str(REPO / "build" / "collsim"))
REDUCE_SCATTER = (0x4E, 0x79, 0xA7)  # phase colours of the timeline (src/viz/palette.cpp)
ALLGATHER = (0x59, 0xA1, 0x4F)


def near(pixel, colour, tolerance=12):
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour))


@unittest.skipUnless(find_chromium() or os.environ.get("CI"), "chromium is not installed (tools/install-deps)")
class ReportInBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory(prefix="collsim-html-")
        tmp = Path(cls.folder.name)
        cls.reports = {}
        runs = {
            "ring": ["--workers", "4", "--topology", "star:4", "--size", "64KiB"],
            "binomial": ["--collective", "broadcast", "--algorithm", "binomial", "--workers", "8", "--topology",
                         "star:8", "--size", "1MiB"],
            "halving": ["--algorithm", "rabenseifner", "--workers", "8", "--topology", "star:8", "--size", "1MiB"],
            "faults": [str(REPO / "scenarios" / "faults" / "slow-link-3-rebuild.json")],
        }
        for name, args in runs.items():
            cls.reports[name] = tmp / f"{name}.html"
            done = subprocess.run([COLLSIM, "run", *args, "--quiet", "--html", str(cls.reports[name]), "--trace",
                                   str(tmp / f"{name}.json")], capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
        cls.browser = Browser()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        cls.folder.cleanup()

    def open(self, name, width=1280, height=900):
        return self.browser.open(self.reports[name], width=width, height=height)

    def test_reports_open_without_console_errors(self):
        for name in self.reports:
            with self.subTest(name):
                page = self.open(name)
                # a Recovery section when the run had recoveries
                self.assertEqual(page.evaluate("document.querySelectorAll('section').length"), 6 if name == "faults" else 5)
                self.assertEqual(page.errors, [])

    def test_report_needs_no_network(self):
        for name, path in self.reports.items():
            text = path.read_text()
            outside = [url for url in re.findall(r"""(?<![\w-])(?:src|href)\s*=\s*["']([^"'#][^"']*)""", text)]
            self.assertEqual(outside, [], name)
            self.assertEqual(set(re.findall(r"https?://[^\s\"'<>)]+", text)), {"http://www.w3.org/2000/svg"}, name)

    def test_screenshot_shows_the_timeline(self):
        page = self.open("ring")
        box = page.evaluate("(() => { const r = document.querySelector('svg.collsim-timeline').getBoundingClientRect();"
                            " return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()")
        width, height, rows = decode_png(page.screenshot(clip=box))
        self.assertEqual((width, height), (round(box[2]), round(box[3])))
        pixels = [(x, rows[y][x]) for y in range(height) for x in range(width)]
        blue = [x for x, pixel in pixels if near(pixel, REDUCE_SCATTER)]
        green = [x for x, pixel in pixels if near(pixel, ALLGATHER)]
        # Four lanes of send bars over half the plot each: thousands of pixels of each phase colour,
        # the reduce-scatter's on the left, the allgather's on the right.
        self.assertGreater(len(blue), 3000, "reduce-scatter bars not visible")
        self.assertGreater(len(green), 3000, "allgather bars not visible")
        self.assertLess(sum(blue) / len(blue), sum(green) / len(green))

    def stepper(self, page):
        return page.evaluate("""(() => {
            const root = document.getElementById('stepper');
            return {frame: Number(root.getAttribute('data-frame')),
                    where: root.querySelector('.where').textContent,
                    counts: [...root.querySelectorAll('table.holds td')].map(td => Number(td.dataset.count)),
                    arrows: root.querySelectorAll('svg.diagram path.message').length,
                    listed: [...root.querySelectorAll('ul.sent li')].map(li => li.textContent)};
        })()""")

    def click(self, page, button):
        page.evaluate(f"document.querySelector('#stepper .{button}').click()")

    def test_step_controls_walk_through_the_ring(self):
        page = self.open("ring")
        start = self.stepper(page)
        self.assertEqual(start["frame"], 0)
        self.assertEqual(start["counts"], [1] * 16)  # 4 ranks x 4 chunks: own contribution only
        self.assertEqual(start["arrows"], 0)
        self.click(page, "next")
        first = self.stepper(page)
        self.assertEqual(first["frame"], 1)
        # steps count from 1 within their phase
        self.assertIn("Step 1 of 6: reduce-scatter step 1 of 3", first["where"])
        self.assertEqual(first["arrows"], 4)
        self.assertEqual(first["listed"], ["rank 0 → 1: chunk 0", "rank 1 → 2: chunk 1", "rank 2 → 3: chunk 2",
                                           "rank 3 → 0: chunk 3"])
        self.assertEqual(sorted(first["counts"]), [1] * 12 + [2] * 4)
        self.click(page, "last")
        last = self.stepper(page)
        self.assertEqual(last["frame"], 6)
        self.assertIn("Step 6 of 6: allgather step 3 of 3", last["where"])
        self.assertEqual(last["counts"], [4] * 16)  # every rank holds every chunk, final
        page.evaluate("(() => { const s = document.querySelector('#stepper input[type=range]'); s.value = '3';"
                      " s.dispatchEvent(new Event('input')); })()")
        middle = self.stepper(page)
        self.assertEqual(middle["frame"], 3)
        # After the reduce-scatter, rank r holds chunk r+1 final.
        counts = middle["counts"]
        self.assertEqual([counts[r * 4 + (r + 1) % 4] for r in range(4)], [4] * 4)
        self.click(page, "first")
        self.assertEqual(self.stepper(page)["frame"], 0)
        self.assertEqual(page.errors, [])

    def test_step_controls_walk_through_a_tree(self):
        page = self.open("binomial")
        holders = []
        for _ in range(4):
            holders.append(self.stepper(page)["counts"].count(8))
            self.click(page, "next")
        self.assertEqual(holders, [1, 2, 4, 8])
        self.assertEqual(page.errors, [])

    def test_step_controls_walk_through_recursive_halving(self):
        page = self.open("halving")
        self.click(page, "next")
        first = self.stepper(page)
        self.assertIn("reduce-scatter step 1 of 3", first["where"])
        self.assertEqual(first["listed"][0], "rank 0 → 4: chunks 4–7 (4)")  # the partner's half
        self.click(page, "last")
        self.assertEqual(self.stepper(page)["counts"], [8] * 64)
        self.assertEqual(page.errors, [])

    def test_faults_report_shows_recovery_and_links(self):
        page = self.open("faults")
        text = page.evaluate("document.body.innerText")
        for words in ("detection", "rebuild", "after rebuild (epoch 1)", "host-2_link_UP", "100 MB/s from"):
            self.assertIn(words, text)
        # the recovery table: the decision, its times and the prediction, as in the trace
        trace = json.loads(self.reports["faults"].with_suffix(".json").read_text())
        event = trace["recovery"][0]
        rows = page.evaluate("[...document.querySelectorAll('#recovery tr')].map(r => [...r.cells].map(c => c.innerText))")
        self.assertEqual(2, len(rows))
        row = dict(zip(rows[0], rows[1]))
        self.assertEqual("dropped rank 2", row["decision"])
        self.assertEqual(event["reason"], row["why"])
        self.assertEqual("0 → 1", row["epoch"])
        for column, key in (("fault", "fault_time"), ("detected", "detected"), ("rebuilt", "rebuilt"),
                            ("round done", "round_completed")):
            self.assertAlmostEqual(event[key] * 1e3, float(row[column].removesuffix(" ms")), delta=1e-3)
        self.assertAlmostEqual(event["prediction"]["drop"] * 1e3, float(row["drop (predicted)"].removesuffix(" ms")),
                               delta=1e-3)
        self.assertEqual(page.errors, [])

    def test_report_prints(self):
        page = self.open("ring")
        self.browser.send("Emulation.setEmulatedMedia", {"media": "print"}, session=page.session)
        shown = page.evaluate("[getComputedStyle(document.querySelector('#stepper .controls')).display,"
                              " getComputedStyle(document.querySelector('.print-only')).display,"
                              " document.querySelectorAll('.print-only tr').length]")
        self.assertEqual(shown, ["none", "block", 7])  # header + the 6 ring steps
        pdf = page.print_pdf()
        self.assertTrue(pdf.startswith(b"%PDF"))
        self.assertGreater(len(pdf), 20000)


if __name__ == "__main__":
    unittest.main()
