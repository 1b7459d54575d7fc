"""Every picture the lab pages show (docs/labs/pictures/*.svg, which the lab tests keep
byte-equal to what the labs' commands write), opened in real headless Chromium and checked
as a reader would look at it: nothing drawn outside the picture (a legend cut at the edge),
no two labels on top of each other, every line of a plot in the legend or labelled where it
is drawn, the model's markers where the model is drawn, and in the screenshot the colours of
every series, inside the legend as well as on the plot.

    COLLSIM=build/collsim /usr/bin/python3 -m unittest -v test_lab_pictures   (from tests/cli)
"""
import os
import re
import unittest
from pathlib import Path

from headless_chromium import Browser, decode_png_lines, find_chromium

REPO = Path(__file__).resolve().parents[2]
LABS = REPO / "docs" / "labs"

# Every text's box, every plot line's colour and kind, and the legend's swatches, measured
# by the browser that draws them.
MEASURE = """(() => {
  const svg = document.documentElement;
  const box = e => { const b = e.getBBox(); const m = e.getCTM();
                     return [b.x * m.a + m.e, b.y * m.d + m.f, (b.x + b.width) * m.a + m.e, (b.y + b.height) * m.d + m.f]; };
  const cls = e => e.getAttribute('class') || '';
  const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim() && !t.closest('title'))
    .map(t => ({text: t.textContent, box: box(t), cls: cls(t), legend: !!t.closest('.legend')}));
  const lines = [...svg.querySelectorAll('polyline')].map(l => ({cls: cls(l), stroke: l.getAttribute('stroke'),
    points: (l.getAttribute('points') || '').trim().split(/\\s+/).filter(Boolean).length}));
  const swatches = [...svg.querySelectorAll('.legend line, .legend circle')].map(
    e => e.getAttribute('stroke') || e.getAttribute('fill'));
  const barLabels = [...svg.querySelectorAll('.iteration-lanes text')]
    .filter(t => (t.getAttribute('style') || '').includes('#ffffff'))
    .map(t => ({text: t.textContent, box: box(t), bar: box(t.previousElementSibling)}));
  return {width: +svg.getAttribute('width'), height: +svg.getAttribute('height'), texts, lines, swatches, barLabels,
          markers: svg.querySelectorAll('.model-marker').length, references: svg.querySelectorAll('.reference').length,
          referenceLabels: svg.querySelectorAll('.reference-label').length};
})()"""


def pictures():
    found = []
    for page in sorted(LABS.glob("lab*.md")):
        for name in re.findall(r"\]\(pictures/([^)]+\.svg)\)", page.read_text()):
            found.append(LABS / "pictures" / name)
    return found


def overlap(a, b):
    return min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1


def pixel_count(row, pixel, channels, columns):
    """How many pixels of the row's columns are exactly `pixel`."""
    part = bytes(row[columns.start * channels:columns.stop * channels])
    return sum(1 for i in range(0, len(part), channels) if part[i:i + channels] == pixel) if pixel in part else 0


def hex_rgb(colour):
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


@unittest.skipUnless(find_chromium() or os.environ.get("CI"), "chromium is not installed (tools/install-deps)")
class LabPicturesInBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.browser = Browser()
        cls.measured = {}
        # one tab at a time: measured, photographed, closed
        for path in pictures():
            page = cls.browser.open(path, width=1400, height=1000)
            measured = page.evaluate(MEASURE)
            measured["errors"] = page.errors
            measured["png"] = page.screenshot(clip=(0, 0, measured["width"], measured["height"]), fast=True)
            page.close()
            cls.measured[path.name] = (None, measured)

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()

    def test_every_lab_picture_is_checked(self):
        self.assertEqual(len(set(pictures())), len(pictures()))
        self.assertGreaterEqual(len(self.measured), 14)

    def test_nothing_is_drawn_outside_the_picture(self):
        for name, (page, m) in self.measured.items():
            with self.subTest(picture=name):
                self.assertEqual([], m["errors"])
                outside = [t["text"] for t in m["texts"]
                           if t["box"][0] < -0.5 or t["box"][1] < -0.5 or t["box"][2] > m["width"] + 0.5
                           or t["box"][3] > m["height"] + 0.5]
                self.assertEqual([], outside, "text cut at the picture's edge")

    def test_a_label_inside_a_bar_fits_in_it(self):
        for name, (_, m) in self.measured.items():
            with self.subTest(picture=name):
                spilled = [l["text"] for l in m["barLabels"]
                           if l["box"][0] < l["bar"][0] - 0.5 or l["box"][2] > l["bar"][2] + 0.5]
                self.assertEqual([], spilled, "bucket labels wider than their bars")

    def test_every_picture_is_small_enough_to_open_anywhere(self):
        # a timeline of hundreds of messages says no more than its steps (--messages none)
        for path in pictures():
            with self.subTest(picture=path.name):
                self.assertLess(path.stat().st_size, 200_000)

    def test_no_label_sits_on_another(self):
        for name, (_, m) in self.measured.items():
            with self.subTest(picture=name):
                # legend entries, axis titles, ticks and line labels (not the labels inside bars)
                texts = [t for t in m["texts"] if "overlap" not in t["cls"]]
                clashes = [(a["text"], b["text"]) for i, a in enumerate(texts) for b in texts[i + 1:]
                           if overlap(a["box"], b["box"])]
                self.assertEqual([], clashes)

    def test_every_plot_line_is_named(self):
        for name, (_, m) in self.measured.items():
            series = [l for l in m["lines"] if "series" in l["cls"]]
            if not series:
                continue  # a timeline
            with self.subTest(picture=name):
                # each series' colour is in the legend
                self.assertLessEqual({l["stroke"] for l in series}, set(m["swatches"]))
                # each distinct bound line carries its own label where it is drawn
                bounds = [l for l in m["lines"] if "bound" in l["cls"].split()]
                labels = [t for t in m["texts"] if "bound-label" in t["cls"]]
                self.assertEqual(len(bounds), len(labels))
                # a model drawn is marked at every point, so that it shows where it equals the simulation
                models = [l for l in m["lines"] if "model" in l["cls"].split()]
                self.assertEqual(sum(l["points"] for l in models), m["markers"])
                self.assertEqual(m["references"], m["referenceLabels"])

    def test_the_screenshot_shows_every_series_in_the_plot_and_in_the_legend(self):
        for name, (_, m) in self.measured.items():
            colours = {l["stroke"] for l in m["lines"] if "series" in l["cls"]}
            if not colours:
                continue
            with self.subTest(picture=name):
                width, height, channels, rows = decode_png_lines(m["png"])
                self.assertEqual((round(m["width"]), round(m["height"])), (width, height))
                legend_left = int(min(t["box"][0] for t in m["texts"] if t["legend"]) - 40)
                for colour in colours:
                    # the colour's exact pixels (the middle of a 2 px line or a dot is drawn in it, edges are blended)
                    pixel = bytes(hex_rgb(colour)) + (b"\xff" if channels == 4 else b"")
                    count = lambda cut: sum(pixel_count(row, pixel, channels, cut) for row in rows)
                    in_plot, in_legend = count(slice(0, legend_left)), count(slice(legend_left, width))
                    self.assertGreater(in_plot, 50, f"{colour} barely drawn in the plot")
                    self.assertGreater(in_legend, 10, f"{colour} not in the legend")

if __name__ == "__main__":
    unittest.main()
