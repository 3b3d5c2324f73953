"""Checks the DOM of the HTML report, as Chromium rendered it, against `distdebug score --json`.

Usage: check_dom.py DOM.html SCORES.json REPORT_DIR EVIL_TEXT
Every figure the report shows is compared with the JSON the scorer prints for the same folders
and options: the leaderboard cells, the bars of the gap chart, the whiskers of the evidence
chart, the dots and standard deviations of the variation chart, the per-system and
per-incident tables, and the links to the attempt files. Exits 1 with one line per mismatch.
"""

import json
import os
import sys
from html.parser import HTMLParser
from urllib.parse import unquote

AXIS_X, AXIS_W = 210.0, 460.0  # report/charts.rs
VOID = {"meta", "br", "img", "input", "link", "hr", "wbr", "col", "source"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text_parts = [], []

    def classes(self):
        return set((self.attrs.get("class") or "").split())

    def text(self):
        out = []
        for part in self.text_parts:
            out.append(part if isinstance(part, str) else part.text())
        return "".join(out)

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def find_all(self, tag=None, cls=None, **attrs):
        for n in self.walk():
            if tag and n.tag != tag:
                continue
            if cls and cls not in n.classes():
                continue
            if any(n.attrs.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            yield n

    def find(self, *a, **k):
        return next(self.find_all(*a, **k), None)


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        self.cur.text_parts.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        self.cur.text_parts.append(n)

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text_parts.append(data)


def clean(v):
    return 0.0 if v == 0.0 or -0.05 < v < 0.0 else v


def pct(v):
    return f"{clean(v * 100.0):.1f}%"


def with_ci(m):
    return f"{pct(m['mean'])} [{clean(m['ci95'][0] * 100):.1f}, {clean(m['ci95'][1] * 100):.1f}]"


def gap(pp):
    return f"{clean(pp):+.1f}"


def tokens(t):
    return "n/a" if t is None else f"{t:.0f}"


def x_of(v):
    return AXIS_X + min(max(v, 0.0), 1.0) * AXIS_W


errors = []


def expect(what, got, want):
    if got != want:
        errors.append(f"{what}: the page shows {got!r}, score --json gives {want!r}")


def expect_near(what, got, want, tol=0.06):
    if got is None or abs(float(got) - want) > tol:
        errors.append(f"{what}: the page draws {got!r}, score --json gives {want:.2f}")


def cell(row, cls):
    n = row.find("td", cls=cls)
    return None if n is None else n.text().strip()


def main():
    dom_path, scores_path, report_dir, evil = sys.argv[1:5]
    tree = Tree()
    with open(dom_path, encoding="utf-8") as f:
        tree.feed(f.read())
    root = tree.root
    with open(scores_path, encoding="utf-8") as f:
        configs = json.load(f)["configs"]

    # Nothing from files became markup; the hostile text is shown as text.
    for tag in ("script", "img", "iframe", "object"):
        if root.find(tag) is not None:
            errors.append(f"the page has a <{tag}> element: text from a file became markup")
    if evil not in root.text():
        errors.append(f"the hostile model name {evil!r} is not shown as text")

    board = root.find("table", cls="leaderboard")
    rows = list(board.find_all("tr")) if board else []
    shown = [r.attrs["data-config"] for r in rows if "data-config" in r.attrs]
    want_order = [c["config"] for c in sorted(configs, key=lambda c: (-c["block_coverage"]["mean"], c["config"]))]
    expect("leaderboard order", shown, want_order)

    for c in configs:
        name = c["config"]
        row = board.find("tr", data_config=name) if board else None
        if row is None:
            errors.append(f"{name}: no leaderboard row")
            continue
        cov = cell(row, "block-coverage")
        expect(f"{name} block coverage", cov, with_ci(c["block_coverage"]))
        expect(f"{name} precision", cell(row, "precision"), pct(c["block_precision"]["mean"]))
        expect(f"{name} hit rate", cell(row, "hit-rate"), pct(c["block_hit_rate"]["mean"]))
        expect(f"{name} file coverage", cell(row, "file-coverage"), pct(c["file_coverage"]["mean"]))
        expect(f"{name} gap", cell(row, "gap"), gap(c["gap_pp"]))
        expect(f"{name} tokens/run", cell(row, "tokens"), tokens(c["tokens_per_run"]))
        expect(f"{name} flaky", cell(row, "flaky-count"), str(c["flaky"]))
        expect(f"{name} incidents", cell(row, "incidents"), str(c["incidents"]))

        # The gap chart: bar lengths are the coverages, the label the gap.
        g = root.find("g", cls="gap-config", data_config=name)
        if g is None:
            errors.append(f"{name}: not in the gap chart")
        else:
            fbar, bbar = g.find("rect", cls="file-coverage"), g.find("rect", cls="block-coverage")
            expect_near(f"{name} file-coverage bar", float(fbar.attrs["width"]) / AXIS_W, c["file_coverage"]["mean"], 0.001)
            expect_near(f"{name} block-coverage bar", float(bbar.attrs["width"]) / AXIS_W, c["block_coverage"]["mean"], 0.001)
            expect(f"{name} gap label", g.find("text", cls="gap-label").text(), f"gap {gap(c['gap_pp'])} pp")

        # The evidence chart: each tag group's whisker spans the interval score gives.
        for tag in ("causal-method-named", "no-internal-stack-trace", "cross-component"):
            grp = root.find("g", cls="evidence-group", data_group=tag)
            bar = grp.find("g", cls="evidence-bar", data_config=name) if grp else None
            if bar is None:
                errors.append(f"{name}: no bar for {tag} in the evidence chart")
                continue
            s = c["by_tag"].get(tag)
            if s is None:
                expect(f"{name} {tag}", bar.find("text", cls="value").text(), "no incidents in this group")
                continue
            w = bar.find("line", cls="whisker")
            expect_near(f"{name} {tag} whisker low", float(w.attrs["x1"]), x_of(s["block_coverage"]["ci95"][0]))
            expect_near(f"{name} {tag} whisker high", float(w.attrs["x2"]), x_of(s["block_coverage"]["ci95"][1]))
            expect(f"{name} {tag} figures", bar.find("text", cls="value").text(),
                   f"{with_ci(s['block_coverage'])} · n={s['incidents']}")
        grp = root.find("g", cls="evidence-group", data_group="no-causal-code-named")
        rest = [i for i in c["per_incident"] if "causal-method-named" not in i["tags"]]
        bar = grp.find("g", cls="evidence-bar", data_config=name) if grp else None
        if bar is None:
            errors.append(f"{name}: no bar for no-causal-code-named")
        elif rest:
            text = bar.find("text", cls="value").text()
            expect(f"{name} no-causal-code-named n", text.rsplit("n=", 1)[-1], str(len(rest)))
            mean = sum(i["block_coverage"] for i in rest) / len(rest)
            expect(f"{name} no-causal-code-named mean", text.split(" ")[0], pct(mean))

        # Run-to-run variation: one dot per scored attempt, the sd as score gives it.
        chart = next((s for s in root.find_all("svg", cls="variation-chart")
                      if s.find("g", data_config=name) is not None), None)
        if chart is None:
            errors.append(f"{name}: no variation chart")
        for inc in c["per_incident"]:
            iid = inc["incident"]
            v = chart.find("g", cls="variation", data_incident=iid) if chart else None
            if v is None:
                errors.append(f"{name}/{iid}: not in the variation chart")
                continue
            scored = [a for a in inc["attempts"] if a["counted"] and not a["flagged"]]
            dots = list(v.find_all("circle", cls="attempt"))
            expect(f"{name}/{iid} dots", len(dots), len(scored) if inc["status"] == "scored" else 0)
            for a, d in zip(scored, dots):
                expect(f"{name}/{iid} dot attempt", d.attrs.get("data-attempt"), str(a["attempt"]))
                expect_near(f"{name}/{iid} attempt {a['attempt']} dot", float(d.attrs["cx"]), x_of(a["block_coverage"]))
            if inc["status"] == "scored":
                want = f"sd {pct(inc['coverage_sd'])}" + (" · flaky" if inc["flaky"] else "")
                expect(f"{name}/{iid} sd", v.find("text", cls="sd").text(), want)

        # The per-configuration section: tables by system and per incident, and the links.
        sec = root.find("section", cls="config", data_config=name)
        if sec is None:
            errors.append(f"{name}: no section")
            continue
        for system, s in c["by_system"].items():
            r = sec.find("tr", data_system=system)
            if r is None:
                errors.append(f"{name}: system {system} missing")
                continue
            expect(f"{name}/{system} coverage", cell(r, "block-coverage"), with_ci(s["block_coverage"]))
            expect(f"{name}/{system} gap", cell(r, "gap"), gap(s["gap_pp"]))
        table = sec.find("table", cls="per-incident")
        for inc in c["per_incident"]:
            iid = inc["incident"]
            r = table.find("tr", data_incident=iid)
            if r is None:
                errors.append(f"{name}/{iid}: no row")
                continue
            expect(f"{name}/{iid} coverage", cell(r, "block-coverage"), pct(inc["block_coverage"]))
            expect(f"{name}/{iid} file coverage", cell(r, "file-coverage"), pct(inc["file_coverage"]))
            expect(f"{name}/{iid} sd", cell(r, "coverage-sd"), pct(inc["coverage_sd"]))
            expect(f"{name}/{iid} scored", cell(r, "scored"), str(inc["scored_attempts"]))
            links = [a for a in r.find("td", cls="attempts").find_all("a")
                     if a.text().startswith("#")]
            expect(f"{name}/{iid} attempt links", len(links), len(inc["attempts"]))
            for a in links:
                target = os.path.normpath(os.path.join(report_dir, unquote(a.attrs["href"])))
                if not os.path.exists(target):
                    errors.append(f"{name}/{iid}: link {a.attrs['href']} leads nowhere")

    for e in errors:
        print(e)
    checked = sum(len(c["per_incident"]) for c in configs)
    if errors:
        print(f"FAILED: {len(errors)} mismatch(es)")
        sys.exit(1)
    print(f"report DOM matches score --json: {len(configs)} configuration(s), {checked} incident row(s)")


main()
