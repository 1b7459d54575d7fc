"""Pictures of a run as a user meets them: `collsim run ... --svg/--html/--perfetto` and
`collsim render TRACE.json`, checked against the trace they were drawn from (the SVG's
lanes and bars, the Perfetto events and times), and the `links` section of the trace.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest -v test_render
"""
import collections
import json
import os
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
COLLSIM = os.environ.get("COLLSIM", str(REPO / "build" / "collsim"))
SVG = "{http://www.w3.org/2000/svg}"


def run(*args, cwd=None, timeout=120):
    return subprocess.run([COLLSIM, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def classes(element):
    return element.get("class", "").split()


class RenderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory(prefix="collsim-render-")
        cls.tmp = Path(cls.folder.name)
        cls.outputs = {}

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def outputs_of(self, name, *args):
        """Runs `collsim run ARGS` once per class with the trace and every picture."""
        if name not in self.outputs:
            paths = {kind: self.tmp / f"{name}.{kind}" for kind in ("json", "svg", "html", "perfetto.json")}
            done = run("run", *args, "--quiet", "--trace", paths["json"], "--svg", paths["svg"], "--html", paths["html"],
                       "--perfetto", paths["perfetto.json"], cwd=self.tmp)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.outputs[name] = paths
        return self.outputs[name]

    def ring4(self):
        return self.outputs_of("ring4", "--workers", "4", "--topology", "star:4", "--size", "64KiB")

    def naive4(self):
        return self.outputs_of("naive4", "--workers", "4", "--topology", "star:4", "--size", "64KiB",
                               "--algorithm", "naive")

    def slow_link(self):
        return self.outputs_of("slow3", REPO / "scenarios" / "faults" / "slow-link-3-rebuild.json")

    def trace(self, paths):
        return json.loads(paths["json"].read_text())

    def svg(self, paths):
        return ET.parse(paths["svg"]).getroot()

    # --- SVG ---------------------------------------------------------------------------------

    def test_svg_is_xml_with_one_lane_per_rank(self):
        root = self.svg(self.ring4())
        self.assertEqual(root.tag, SVG + "svg")
        self.assertEqual(root.get("data-lanes"), "4")
        self.assertEqual(root.get("data-mode"), "per-rank")
        labels = [t.text for t in root.iter(SVG + "text") if "lane-label" in classes(t)]
        self.assertEqual(labels, [f"rank {r}" for r in range(4)])
        self.assertTrue(any(t.text == "simulated time (µs)" for t in root.iter(SVG + "text")))

    def test_svg_has_a_send_and_a_receive_bar_per_message(self):
        paths = self.ring4()
        messages = self.trace(paths)["messages"]
        rects = list(self.svg(paths).iter(SVG + "rect"))
        for kind in ("send", "recv"):
            bars = [r for r in rects if "span" in classes(r) and kind in classes(r)]
            self.assertEqual(len(bars), len(messages), kind)
            self.assertEqual(collections.Counter((int(b.get("data-src")), int(b.get("data-dst")), int(b.get("data-step")),
                                                  b.get("data-phase")) for b in bars),
                             collections.Counter((m["src"], m["dst"], m["step"], m["phase"]) for m in messages))
        # Reductions happen as reduce-scatter messages arrive; every message has an arrow (24 <= 300).
        reductions = [r for r in rects if "reduce" in classes(r)]
        self.assertEqual(len(reductions), sum(m["phase"] == "reduce-scatter" for m in messages))
        arrows = [line for line in self.svg(paths).iter(SVG + "line") if "arrow" in classes(line)]
        self.assertEqual(len(arrows), len(messages))

    def test_svg_bars_are_placed_by_time(self):
        paths = self.ring4()
        bars = [r for r in self.svg(paths).iter(SVG + "rect") if "send" in classes(r)]
        by_step = {}
        for bar in bars:
            by_step.setdefault((bar.get("data-phase"), int(bar.get("data-step"))), set()).add(round(float(bar.get("x")), 1))
        # A ring step starts at the same time on every rank, later steps further right.
        order = [by_step[("reduce-scatter", s)] for s in range(3)] + [by_step[("allgather", s)] for s in range(3)]
        self.assertTrue(all(len(xs) == 1 for xs in order), order)
        xs = [min(x) for x in order]
        self.assertEqual(xs, sorted(xs))
        self.assertEqual(len(set(xs)), 6)
        # Ring steps take the same time: equally spaced bars, six of them from the first to the last.
        widths = [b - a for a, b in zip(xs, xs[1:])]
        for width in widths:
            self.assertAlmostEqual(width, widths[0], delta=0.05)
        last = max(float(b.get("x")) + float(b.get("width")) for b in bars)
        self.assertAlmostEqual(last - xs[0], 6 * widths[0], delta=0.2)

    def test_svg_marks_faults_and_recovery(self):
        paths = self.slow_link()
        trace = self.trace(paths)
        root = self.svg(paths)
        faults = [line for line in root.iter(SVG + "line") if "fault" in classes(line)]
        self.assertEqual(len(faults), len(trace["faults"]))
        pieces = collections.Counter(c for r in root.iter(SVG + "rect") if "recovery" in classes(r)
                                     for c in classes(r) if c != "recovery")
        self.assertEqual(pieces, {"undetected": 1, "detection": 1, "rebuild": 1, "resume": 1})
        # the bar from the fault to its detection is cut where the stalled round's collective
        # starts: before it the ranks compute and nothing waits on the slow link
        bar = {c: r for r in root.iter(SVG + "rect") if "recovery" in classes(r) for c in classes(r) if c != "recovery"}
        undetected, detection = bar["undetected"], bar["detection"]
        self.assertAlmostEqual(float(undetected.get("x")) + float(undetected.get("width")), float(detection.get("x")),
                               delta=0.05)
        event = trace["recovery"][0]
        stalled = next(r for r in trace["rounds"] if r["start"] + r["compute"] > event["fault_time"])
        felt = stalled["start"] + stalled["compute"]
        self.assertAlmostEqual((felt - event["fault_time"]) / (event["detected"] - felt),
                               float(undetected.get("width")) / float(detection.get("width")), delta=0.02)
        dropped = [r for r in root.iter(SVG + "rect") if "dropped" in classes(r)]
        self.assertEqual(len(dropped), 1)
        rounds = [r for r in root.iter(SVG + "rect") if "round" in classes(r)]
        self.assertEqual(len(rounds), len(trace["rounds"]))
        self.assertEqual(sum(1 for r in root.iter(SVG + "rect") if "compute" in classes(r)),
                         sum(len(r["group"]) for r in trace["rounds"]))
        legend = " ".join(t.text or "" for t in root.iter(SVG + "text"))
        for word in ("fault", "detection", "rebuild", "resume", "out of the group", "compute"):
            self.assertIn(word, legend)

    def test_render_draws_what_run_draws(self):
        paths = self.ring4()
        again = self.tmp / "again.svg"
        done = run("render", paths["json"], "--svg", again)
        self.assertEqual((done.returncode, done.stdout, done.stderr), (0, "", ""))
        self.assertEqual(again.read_bytes(), paths["svg"].read_bytes())

    def test_many_ranks_share_lanes_and_say_so(self):
        svg = self.tmp / "p80.svg"
        done = run("run", "--workers", "80", "--topology", "star:80", "--size", "80KiB", "--quiet", "--svg", svg)
        self.assertEqual(done.returncode, 0, done.stderr)
        root = ET.parse(svg).getroot()
        self.assertEqual((root.get("data-mode"), root.get("data-lanes")), ("grouped", "40"))
        text = " ".join(t.text or "" for t in root.iter(SVG + "text"))
        self.assertIn("80 ranks in 40 lanes of 2", text)
        sends = [r for r in root.iter(SVG + "rect") if "send" in classes(r)]
        self.assertEqual(sum(int(r.get("data-messages", 1)) for r in sends), 2 * 80 * 79)
        self.assertLess(len(sends), 2 * 80 * 79)

    def test_per_step_traces_draw_one_bar_per_step(self):
        trace_path, svg = self.tmp / "p128.json", self.tmp / "p128.svg"
        done = run("run", "--workers", "128", "--topology", "star:128", "--size", "1MiB", "--quiet",
                   "--trace", trace_path, "--svg", svg)
        self.assertEqual(done.returncode, 0, done.stderr)
        trace = json.loads(trace_path.read_text())
        self.assertEqual(trace["messages_detail"], "per-step")
        root = ET.parse(svg).getroot()
        self.assertEqual((root.get("data-mode"), root.get("data-lanes")), ("per-step", "2"))
        steps = [r for r in root.iter(SVG + "rect") if "step" in classes(r)]
        self.assertEqual(sum(int(r.get("data-messages", 1)) for r in steps), trace["summary"]["message_count"])
        self.assertIn("one entry per step", " ".join(t.text or "" for t in root.iter(SVG + "text")))

    # --- Perfetto ----------------------------------------------------------------------------

    def perfetto(self, paths):
        events = json.loads(paths["perfetto.json"].read_text())["traceEvents"]
        for event in events:
            self.assertIn(event["ph"], "XsfiCM", event)
            self.assertIn("pid", event)
            if event["ph"] != "M":
                self.assertIsInstance(event["ts"], (int, float))
        return events

    def test_perfetto_has_a_thread_per_rank_and_a_flow_per_message(self):
        paths = self.ring4()
        trace, events = self.trace(paths), self.perfetto(self.ring4())
        threads = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
        for r in range(4):
            self.assertIn(f"rank {r} (host-{r})", threads.values())
        starts = [e for e in events if e["ph"] == "s"]
        finishes = [e for e in events if e["ph"] == "f"]
        self.assertEqual(len(starts), len(trace["messages"]))
        self.assertEqual(sorted(e["id"] for e in starts), sorted(e["id"] for e in finishes))
        tid_of_rank = {int(name.split()[1]): tid for tid, name in threads.items() if name.startswith("rank ")}
        for flow in starts:
            args = flow["args"]
            self.assertEqual(flow["tid"], tid_of_rank[args["src"]])
            self.assertLessEqual(args["start_s"] * 1e6 - 1e-3, flow["ts"])
            self.assertLessEqual(flow["ts"], args["end_s"] * 1e6 + 1e-3)
        matching = {e["id"]: e for e in finishes}
        for flow in starts:
            self.assertEqual(matching[flow["id"]]["tid"], tid_of_rank[flow["args"]["dst"]])
            # the arrow spans the transfer: it leaves at the start and lands at the end
            # (each step slice of this ring holds its whole message)
            args = flow["args"]
            self.assertAlmostEqual(flow["ts"], args["start_s"] * 1e6, delta=1e-3)
            self.assertAlmostEqual(matching[flow["id"]]["ts"], args["end_s"] * 1e6, delta=1e-3)
            self.assertGreater(matching[flow["id"]]["ts"], flow["ts"])

    def test_perfetto_phase_slices_span_the_messages_of_each_rank(self):
        paths = self.ring4()
        trace, events = self.trace(paths), self.perfetto(paths)
        threads = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
        phases = [e for e in events if e["ph"] == "X" and e["cat"] == "phase"]
        self.assertEqual(len(phases), 4 * 2)
        for slice_ in phases:
            rank = int(threads[slice_["tid"]].split()[1])
            mine = [m for m in trace["messages"] if m["phase"] == slice_["name"] and rank in (m["src"], m["dst"])]
            self.assertAlmostEqual(slice_["ts"], min(m["start"] for m in mine) * 1e6, delta=1e-3)
            self.assertAlmostEqual(slice_["ts"] + slice_["dur"], max(m["end"] for m in mine) * 1e6, delta=1e-3)
        steps = [e for e in events if e["ph"] == "X" and e["cat"] == "step"]
        self.assertEqual(len(steps), 4 * 6)  # each rank, each of the 2(p-1) ring steps

    def test_perfetto_slices_nest_on_every_thread(self):
        for paths in (self.ring4(), self.slow_link(), self.naive4()):
            events = self.perfetto(paths)
            by_thread = collections.defaultdict(list)
            for e in events:
                if e["ph"] == "X":
                    by_thread[e["tid"]].append((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)))
            for tid, slices in by_thread.items():
                slices.sort(key=lambda s: (s[0], -s[1]))
                open_ends = []
                for start, end in slices:
                    while open_ends and open_ends[-1] <= start:
                        open_ends.pop()
                    self.assertTrue(not open_ends or open_ends[-1] >= end, f"thread {tid}: {start}-{end} crosses")
                    open_ends.append(end)

    def test_perfetto_faults_are_instant_events_and_recovery_has_its_thread(self):
        paths = self.slow_link()
        trace, events = self.trace(paths), self.perfetto(paths)
        instants = [e for e in events if e["ph"] == "i"]
        self.assertEqual(len(instants), len(trace["faults"]))
        for event, fault in zip(instants, trace["faults"]):
            self.assertAlmostEqual(event["ts"], fault["time"] * 1e6, delta=1e-3)
            self.assertEqual(event["s"], "g")
        recovery = {e["name"]: e for e in events if e["ph"] == "X" and e["cat"] == "recovery"}
        event = trace["recovery"][0]
        self.assertAlmostEqual(recovery["detection"]["ts"], event["fault_time"] * 1e6, delta=1e-3)
        self.assertAlmostEqual(recovery["rebuild"]["ts"], event["detected"] * 1e6, delta=1e-3)
        self.assertEqual(sum(1 for e in events if e["ph"] == "X" and e["name"] == "compute"),
                         sum(len(r["group"]) for r in trace["rounds"]))

    # --- links in the trace ------------------------------------------------------------------

    def test_ring_loads_every_link_alike(self):
        trace = self.trace(self.ring4())
        p, n = 4, 64 * 1024
        links = trace["links"]["list"]
        self.assertEqual(len(links), 2 * p)  # each host's UP and DOWN halves
        for link in links:
            self.assertEqual((link["flows"], link["bytes"], link["peak_flows"]), (2 * (p - 1), 2 * (p - 1) * n // p, 1))
            self.assertAlmostEqual(link["busy_time"], trace["summary"]["simulated_time"], delta=1e-12)
        self.assertEqual(sum(link["bytes"] for link in links), 2 * sum(m["bytes"] for m in trace["messages"]))
        bins = trace["links"]["bins"]
        for link in links:
            self.assertEqual(len(link["series"]), bins)
            self.assertAlmostEqual(sum(link["series"]), link["bytes"], delta=bins)

    def test_naive_reduce_funnels_into_the_root(self):
        trace = self.trace(self.naive4())
        links = {link["name"]: link for link in trace["links"]["list"]}
        busiest = trace["links"]["list"][0]
        # The root's DOWN link carries the 3 reduce messages at once, its UP link the 3 broadcasts.
        self.assertEqual(busiest["flows"], 3)
        self.assertEqual({links["host-0_link_DOWN"]["peak_flows"], links["host-0_link_UP"]["peak_flows"]}, {3})
        self.assertEqual(links["host-0_link_DOWN"]["bytes"], 3 * 64 * 1024)
        self.assertEqual(links["host-1_link_UP"]["peak_flows"], 1)

    def test_slow_link_records_its_bandwidth_change(self):
        trace = self.trace(self.slow_link())
        changed = [link for link in trace["links"]["list"] if "bandwidth_changes" in link]
        self.assertEqual(sorted(link["name"] for link in changed), ["host-2_link_DOWN", "host-2_link_UP"])
        fault = trace["faults"][0]
        for link in changed:
            self.assertEqual(link["bandwidth_changes"][0]["time"], fault["time"])
            self.assertAlmostEqual(link["bandwidth_changes"][0]["bandwidth"], link["bandwidth"] * 0.01)

    # --- bad input ---------------------------------------------------------------------------

    def assert_bad_input(self, args, *fragments):
        done = run(*args, cwd=self.tmp)
        context = f"collsim {' '.join(map(str, args))}: {done.stderr!r}"
        self.assertEqual(done.returncode, 2, context)
        self.assertEqual(done.stdout, "", context)
        lines = done.stderr.splitlines()
        self.assertEqual(len(lines), 1, context)
        self.assertTrue(lines[0].startswith("collsim: error: "), context)
        for fragment in fragments:
            self.assertIn(fragment, lines[0], context)

    def test_render_refuses_bad_input_with_one_line(self):
        good = self.ring4()["json"]
        not_json = self.tmp / "not.json"
        not_json.write_text("{oops")
        not_trace = self.tmp / "scenario.json"
        not_trace.write_text(json.dumps({"name": "x", "workers": 4}))
        broken = self.tmp / "broken.json"
        document = json.loads(good.read_text())
        del document["messages"][2]["end"]
        broken.write_text(json.dumps(document))
        out = self.tmp / "never.svg"
        self.assert_bad_input(["render", self.tmp / "missing.json", "--svg", out], "missing.json", "cannot read")
        self.assert_bad_input(["render", not_json, "--svg", out], "not.json", "malformed JSON")
        self.assert_bad_input(["render", not_trace, "--svg", out], "scenario.json", "format", "collsim-trace/2")
        self.assert_bad_input(["render", broken, "--svg", out], "messages[2].end: missing")
        self.assert_bad_input(["render", good], "--svg", "--html", "--perfetto")
        self.assert_bad_input(["render", good, "--svg", self.tmp], "--svg", "is a folder")
        self.assert_bad_input(["render", good, "--svgg", out], "--svgg")
        self.assertFalse(out.exists())

    def test_old_traces_without_links_still_render(self):
        document = json.loads(self.ring4()["json"].read_text())
        del document["links"]
        old = self.tmp / "old.json"
        old.write_text(json.dumps(document))
        html, svg = self.tmp / "old.html", self.tmp / "old.svg"
        done = run("render", old, "--html", html, "--svg", svg)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("no <code>links</code> section", html.read_text())
        ET.parse(svg)

    def test_outputs_are_written_whole(self):
        paths = self.ring4()
        leftovers = [p.name for p in self.tmp.iterdir() if ".tmp." in p.name]
        self.assertEqual(leftovers, [])
        self.assertTrue(paths["html"].read_text().rstrip().endswith("</html>"))


if __name__ == "__main__":
    unittest.main()
