"""graph.html_view: the JSON a page draws (keys, groups, budget, edges), the page's
self-containment, and the page itself in headless Chromium: every expected box, groups
opening and closing, search, cards, upstream highlighting, no overlapping boxes, every
edge drawn, several views on one page and a view inserted as a notebook inserts it."""

import json
import os
import re
from importlib import resources

import networkx as nx
import pytest

from engine import Input, Model, model_from_json
from graph import to_networkx
from graph._walk import walk
from graph.html_view import BUDGET, EDGE_BUDGET, save_html, to_html, view_data
from graph.profiler import profile
from layers import Activation, Add, BatchNormalization, Conv2D, Dense, Dropout
from tests.graph.data.make_keras_applications import stored_json
from tests.graph.zoo import zoo

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
DATA = re.compile(r'<script type="application/json" class="nwv-data">(.*?)</script>', re.DOTALL)


def page_data(page):
    return json.loads(DATA.search(page).group(1))


def box_keys(data, level):
    """The key of each box item of ``level``, by item id."""
    table = data["layers"] if level == "layer" else data["calls"]
    return {i: table[item]["key"] for i, item in enumerate(data["levels"][level]["items"]) if isinstance(item, int)}


def groups(data, level, kind):
    """The groups of ``kind`` ("model", "run" or "segment") at ``level``, in item order."""
    return [item for item in data["levels"][level]["items"] if isinstance(item, dict) and item["kind"] == kind]


def item_key(data, level, item_id):
    item = data["levels"][level]["items"][item_id]
    return box_keys(data, level)[item_id] if isinstance(item, int) else item.get("key")


def shown(data, level, open_keys=None):
    """``{item id: the id of the item showing it}`` with the groups in ``open_keys`` open
    (by default, as the page opens them at first)."""
    items = data["levels"][level]["items"]
    shown_as, stack = {}, [(0, None)]
    while stack:
        item_id, owner = stack.pop()
        item = items[item_id]
        shown_as[item_id] = item_id if owner is None else owner
        if isinstance(item, int):
            continue
        is_open = item["open"] if open_keys is None or item["kind"] == "root" else item["key"] in open_keys
        child_owner = owner if owner is not None else (None if is_open else item_id)
        stack.extend((child, child_owner) for child in item["children"])
    return shown_as


def expected_edges(data, level, open_keys=None):
    """The (source key, target key) pairs a page draws: each tensor read between boxes,
    from what shows its source to what shows its target, once."""
    shown_as = shown(data, level, open_keys)
    ends = data["levels"][level]["edges"]
    pairs = {(shown_as[a], shown_as[b]) for a, b in zip(ends[::2], ends[1::2]) if shown_as[a] != shown_as[b]}
    return sorted((item_key(data, level, a), item_key(data, level, b)) for a, b in pairs)


def visible_keys(data, level, open_keys=None):
    """The keys of the boxes and closed groups a page shows."""
    items = data["levels"][level]["items"]

    def is_open(item):
        return not isinstance(item, int) and (item["open"] if open_keys is None else item["key"] in open_keys)

    return {item_key(data, level, i) for i in set(shown(data, level, open_keys).values())
            if i != 0 and not is_open(items[i])}


def residual(blocks):
    """A stem and ``blocks`` identical residual blocks of 7 layers, then a head."""
    x = Input(shape=(8, 8, 3), name="image")
    h = Conv2D(4, 3, padding="same", name="stem")(x)
    for i in range(blocks):
        r = Activation("relu", name=f"b{i}_act")(BatchNormalization(name=f"b{i}_bn1")(
            Conv2D(4, 3, padding="same", name=f"b{i}_conv1")(h)))
        r = BatchNormalization(name=f"b{i}_bn2")(Conv2D(4, 3, padding="same", name=f"b{i}_conv2")(r))
        h = Activation("relu", name=f"b{i}_out")(Add(name=f"b{i}_add")([h, r]))
    return Model(x, h, name="residual")


def dropout_chain(length):
    """A chain of ``length`` Dropout layers, all different: no runs, no nesting."""
    x = Input(shape=(4,), name="x")
    h = x
    for i in range(length):
        h = Dropout(0.001 * (i + 1), name=f"drop{i}")(h)
    return Model(x, h, name="chain")


@pytest.fixture(scope="module")
def resnet50():
    """ResNet50 as Keras builds it (weights=None, 32x32 inputs), read from its stored JSON config."""
    return model_from_json(stored_json("ResNet50"))


@pytest.fixture(scope="module")
def densenet():
    from benchmarks.big_graphs import densenet_like

    return densenet_like(341)  # 20 blocks of 17 layers after the input


# The JSON the page draws


def test_boxes_groups_and_edges_are_the_walks_at_both_levels():
    model = zoo()
    graph = walk(model, expand_nested=True)
    data = view_data(model)
    for level in ("layer", "node"):
        assert sorted(box_keys(data, level).values()) == sorted(graph.vertices(level))
        models = {item["key"]: item for item in groups(data, level, "model")}
        assert sorted(models) == sorted({call.key(level) for call in graph.calls if call.expanded})
        assert all(item["open"] for item in models.values())  # 15 boxes: within the budget
        pairs = {(s, t) for s, t, _ in graph.edges(level) if s != t}
        assert expected_edges(data, level) == sorted(pairs)
    inner = next(item for item in groups(data, "layer", "model") if item["key"] == "level1/level2/level3")
    keys = box_keys(data, "layer")
    assert sorted(keys[child] for child in inner["children"]) == ["level1/level2/level3/d3", "level1/level2/level3/x3"]


def test_a_shared_layer_is_one_box_per_layer_and_one_per_call():
    data = view_data(zoo())
    shared = next(layer for layer in data["layers"] if layer["key"] == "shared")
    assert [data["calls"][i]["key"] for i in shared["calls"]] == ["shared[0]", "shared[1]"]
    assert [data["calls"][i]["in"] for i in shared["calls"]] == ["(None, 8)", "(None, 8)"]
    assert shared["params"] == 8 * 8 + 8
    assert data["configs"][shared["config"]]["activation"] == "relu"
    assert "name" not in data["configs"][shared["config"]]


def test_costs_come_from_profile():
    model = zoo()
    data = view_data(model)
    by_key = {call["key"]: call for call in data["calls"]}
    for row in profile(model).rows:
        assert (by_key[row["node"]]["flops"], by_key[row["node"]]["bytes"]) == (row["flops"], row["activation_bytes"])


def test_runs_of_identical_blocks_are_groups():
    data = view_data(residual(4))
    runs = groups(data, "layer", "run")
    assert [run["title"] for run in runs] == ["×4  b0_conv1 … b3_out"]
    keys = box_keys(data, "layer")
    assert [keys[child] for child in runs[0]["children"]][:7] == [
        "b0_conv1", "b0_bn1", "b0_act", "b0_conv2", "b0_bn2", "b0_add", "b0_out"]
    assert runs[0]["leaves"] == 28 and runs[0]["open"]


def test_a_flat_graph_past_the_budget_is_cut_into_closed_segments():
    data = view_data(dropout_chain(400))
    for level in ("layer", "node"):
        items = data["levels"][level]["items"]
        root = items[0]
        segments = [items[child] for child in root["children"] if isinstance(items[child], dict) and items[child]["kind"] == "segment"]
        assert len(root["children"]) <= BUDGET and len(segments) >= 2
        assert all(len(segment["children"]) <= BUDGET and not segment["open"] for segment in segments)
        assert sum(segment["leaves"] for segment in segments) + len(root["children"]) - len(segments) == 401
        assert len(visible_keys(data, level)) <= BUDGET
    first = groups(data, "layer", "segment")[0]
    assert first["title"].startswith("layers 1–")


def test_segments_end_where_one_tensor_crosses(densenet):
    data = view_data(densenet)
    items = data["levels"]["layer"]["items"]
    run = groups(data, "layer", "run")[0]
    assert run["title"].startswith("×20") and run["open"]
    segments = [items[child] for child in run["children"]]
    assert {segment["kind"] for segment in segments} == {"segment"}
    assert all(not segment["open"] for segment in segments)
    # Inside a block, its entry and every output are read further on: only between blocks does one tensor cross.
    assert [segment["leaves"] % 17 for segment in segments] == [0] * len(segments)
    keys = box_keys(data, "layer")
    ends = data["levels"]["layer"]["edges"]
    for segment in segments:
        inside = set(segment["children"])
        assert sum(a in inside and b in inside for a, b in zip(ends[::2], ends[1::2])) <= EDGE_BUDGET
        assert {keys[child] for child in segment["children"]} <= set(walk(densenet).vertices("layer"))
    assert len(visible_keys(data, "layer")) <= BUDGET


@pytest.mark.slow  # Keras builds ResNet50 once for the module: 5-15 s on 2 cores
def test_groups_open_depth_by_depth_within_the_budget(resnet50):
    data = view_data(resnet50)
    for level in ("layer", "node"):
        items = data["levels"][level]["items"]
        assert sum(1 for item in items if isinstance(item, int)) == 177
        runs = groups(data, level, "run")
        assert sorted(int(run["title"][1:].split()[0]) for run in runs) == [2, 2, 3, 5]
        assert not any(run["open"] for run in runs)  # opening them all would show 177 boxes
        assert len(visible_keys(data, level)) <= BUDGET


def test_node_data_colours_boxes_with_a_legend():
    model = zoo()
    data = view_data(model, node_data="params")
    level = data["levels"]["layer"]
    assert level["legend"]["title"] == "parameters" and len(level["legend"]["stops"]) == 5
    keys = box_keys(data, "layer")
    coloured = {keys[item]: (value, fill) for item, value, fill in level["colours"]}
    assert set(coloured) == set(keys.values())
    assert coloured["proj"][0] == model.get_layer("proj").count_params() and re.fullmatch("#[0-9a-f]{6}", coloured["proj"][1])
    assert coloured["a"][1] != coloured["proj"][1]
    with pytest.raises(ValueError, match="node_data must be one of"):
        view_data(model, node_data="weights")


def test_the_page_is_self_contained():
    page = to_html(zoo(), node_data="flops")
    assert not re.search(r"""(src|href)\s*=|\bimport\b|url\(|@import""", page)
    assert "http" not in re.sub(r"/\*.*?\*/", "", page, flags=re.DOTALL)  # addresses only in license comments
    for name in ("dagre.min.js", "viewer.js", "viewer.css", "LICENSE.dagre", "README.md"):
        assert resources.files("graph").joinpath("_viewer", name).is_file()
    assert "Chris Pettitt" in resources.files("graph").joinpath("_viewer", "LICENSE.dagre").read_text()
    assert resources.files("graph").joinpath("_viewer", "dagre.min.js").read_text().startswith('"use strict";var dagre=')


def test_names_are_escaped_in_the_json():
    x = Input(shape=(3,), name="x")
    model = Model(x, Dense(2, name="d<script>alert(1)<b>&amp;")(x), name="m<i>")
    page = to_html(model)
    assert "<script>alert" not in page and "<b>&amp;" not in page and "<title>m&lt;i&gt;</title>" in page
    assert page_data(page)["layers"][1]["key"] == "d<script>alert(1)<b>&amp;"


def test_height_must_be_whole_pixels():
    with pytest.raises(ValueError, match=r"height to be a whole number of pixels of at least 100, but received "
                                         r"'600px'\. Pass for instance height=600\."):
        to_html(zoo(), height="600px")


def test_save_html_writes_the_page(tmp_path):
    model = zoo()
    save_html(model, tmp_path / "zoo.html", title="The zoo")
    assert (tmp_path / "zoo.html").read_text(encoding="utf-8") == to_html(model, title="The zoo")


# The page in a real browser


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.fail("headless Chromium is not installed: run .ci/install-chromium (make test does), as root "
                    "or through sudo")  # a browser test skipped would pass without testing anything
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager, were it ever asked, stays off the network
    os.environ["SE_AVOID_STATS"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium')}", "--window-size=1200,900"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "SEVERE"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


class Page:
    """One page open in the browser, read through its data attributes."""

    def __init__(self, driver, path, page):
        self.driver = driver
        self.data = page_data(page)
        driver.get(path.as_uri())
        self.wait("return document.querySelectorAll('.nwv[data-ready], .nwv[data-error]').length > 0")
        errors = self.run("return Array.from(document.querySelectorAll('.nwv[data-error]'), r => r.dataset.error)")
        assert errors == [] and driver.get_log("browser") == []

    def run(self, script, *args):
        return self.driver.execute_script(script, *args)

    def wait(self, condition, *args):
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(self.driver, 60).until(lambda driver: driver.execute_script(condition, *args))

    def shown(self, root=0):
        """``{key: (kind, open, x, y, width, height)}`` of the boxes and groups drawn, from their body or frame."""
        return {key: tuple(rest) for key, *rest in self.run("""
            const root = document.querySelectorAll('.nwv')[arguments[0]];
            return Array.from(root.querySelectorAll('[data-item]:not(.nwv-card)'), element => {
              const r = element.querySelector('.nwv-body, .nwv-frame').getBoundingClientRect();
              return [element.dataset.key, element.dataset.kind, element.dataset.open === 'true',
                      r.x, r.y, r.width, r.height];
            });""", root)}

    def edges(self, root=0):
        return sorted(tuple(edge) for edge in self.run("""
            const root = document.querySelectorAll('.nwv')[arguments[0]];
            return Array.from(root.querySelectorAll('[data-edge]'), e => [e.dataset.source, e.dataset.target]);""",
                                                        root))

    def closed(self):
        """The keys of the boxes and closed groups drawn."""
        return {key for key, (kind, is_open, *_) in self.shown().items() if not is_open}

    def open_groups(self):
        return {key for key, (kind, is_open, *_) in self.shown().items() if kind != "box" and is_open}

    def click(self, selector):
        self.driver.find_element("css selector", selector).click()

    def renders(self):
        return int(self.run("return document.querySelector('.nwv').dataset.renders"))

    def toggle(self, key):
        """Clicks the triangle of a group's title, wherever the view has it (perhaps off the screen)."""
        renders = self.renders()
        self.run("""
            const toggle = document.querySelector(`[data-key="${arguments[0]}"] > text[data-toggle]`);
            toggle.dispatchEvent(new MouseEvent('mousedown', {bubbles: true, button: 0}));
            window.dispatchEvent(new MouseEvent('mouseup', {bubbles: true, button: 0}));""", key)
        self.wait("return Number(document.querySelector('.nwv').dataset.renders) > arguments[0]", renders)

    def card(self):
        return self.run("const card = document.querySelector('.nwv-card');"
                        "return card.style.display === 'none' ? null : card.innerText")


def open_page(browser, tmp_path, model, name="view.html", **options):
    page = to_html(model, **options)
    path = tmp_path / name
    path.write_text(page, encoding="utf-8")
    return Page(browser, path, page)


def assert_no_overlap(boxes):
    """No two boxes or closed groups drawn overlap (open groups hold the ones inside them)."""
    rects = sorted((x, y, x + w, y + h, key) for key, (kind, is_open, x, y, w, h) in boxes.items() if not is_open)
    for i, (left, top, right, bottom, key) in enumerate(rects):
        for other_left, other_top, other_right, other_bottom, other in rects[i + 1:]:
            if other_left >= right:
                break
            assert other_top >= bottom or top >= other_bottom, f"{key} overlaps {other}"


def test_the_zoo_shows_every_box_and_edge_at_both_levels(browser, tmp_path):
    model = zoo()
    graph = walk(model, expand_nested=True)
    page = open_page(browser, tmp_path, model)
    # A page of its own fills the window, whatever height= says.
    assert page.run("return document.querySelector('.nwv').getBoundingClientRect().bottom") == pytest.approx(
        page.run("return window.innerHeight") - 8, abs=1)
    boxes = page.shown()
    assert {key for key, (kind, *_) in boxes.items() if kind == "box"} == set(graph.vertices("layer"))
    assert page.open_groups() == {"level1", "level1/level2", "level1/level2/level3"}
    assert page.edges() == expected_edges(page.data, "layer")
    assert len(page.edges()) == len({(s, t) for s, t, _ in graph.edges("layer")})
    assert_no_overlap(boxes)
    page.click(".nwv-toggle input")
    page.wait("return document.querySelector('.nwv').dataset.level === 'node'")
    boxes = page.shown()
    assert {key for key, (kind, *_) in boxes.items() if kind == "box"} == set(graph.vertices("node"))
    assert page.edges() == expected_edges(page.data, "node")
    assert_no_overlap(boxes)


def test_closing_and_opening_a_nested_model(browser, tmp_path):
    page = open_page(browser, tmp_path, zoo())
    page.click('[data-key="level1/level2"] > text[data-toggle]')  # a real click on the group's title
    boxes = page.shown()
    assert boxes["level1/level2"][:2] == ("model", False)
    assert not any(key.startswith("level1/level2/") for key in boxes)
    assert page.edges() == expected_edges(page.data, "layer", {"level1", "level1/level2/level3"})
    assert ("level1/x1", "level1/level2") in page.edges() and ("level1/level2", "level1/multiply") in page.edges()
    assert_no_overlap(boxes)
    page.toggle("level1/level2")
    assert {"level1/level2/level3/d3", "level1/level2/d2"} <= set(page.shown())
    assert_no_overlap(page.shown())


def test_a_card_shows_class_config_calls_and_costs(browser, tmp_path):
    model = zoo()
    page = open_page(browser, tmp_path, model)
    page.click('[data-key="shared"] .nwv-body')
    card = page.card()
    assert card.startswith("×\nshared\nDense\n")
    assert f"parameters\t{model.get_layer('shared').count_params()} (shared by 2 calls, counted once)" in card
    flops = {row["node"]: row["flops"] for row in profile(model).rows}
    for call in ("shared[0]", "shared[1]"):
        assert f"{call}\t(None, 8) → (None, 8)\t{flops[call]:,} FLOPs" in card
    assert f"FLOPs (batch 1)\t{flops['shared[0]'] + flops['shared[1]']:,}" in card
    assert "activation\trelu" in card and "units\t8" in card
    page.click('.nwv-card button[data-action="upstream"]')
    traced = set(page.run("return Array.from(document.querySelectorAll('.nwv-box.nwv-traced'), e => e.dataset.key)"))
    assert traced == nx.ancestors(to_networkx(model), "shared") | {"shared"}


@pytest.mark.slow  # Keras builds ResNet50 once for the module: 5-15 s on 2 cores
def test_resnet50_opens_its_runs_and_finds_a_layer(browser, tmp_path, resnet50):
    page = open_page(browser, tmp_path, resnet50)
    boxes = page.shown()
    assert page.closed() == visible_keys(page.data, "layer") and len(boxes) <= BUDGET
    assert page.edges() == expected_edges(page.data, "layer")
    assert_no_overlap(boxes)
    run = next(key for key in boxes if key == "run:conv4_block2_1_conv")
    page.toggle(run)
    boxes = page.shown()
    assert {f"conv4_block{b}_{i}_conv" for b in range(2, 7) for i in (1, 2, 3)} <= set(boxes)
    assert page.edges() == expected_edges(page.data, "layer", page.open_groups())
    assert_no_overlap(boxes)

    search = page.driver.find_element("css selector", ".nwv-search")
    search.send_keys("conv5_block3_2_conv")
    search.send_keys("\n")
    page.wait("return document.querySelector('.nwv-current') !== null")
    assert page.run("return document.querySelector('.nwv-current').dataset.key") == "conv5_block3_2_conv"
    assert "run:conv5_block2_1_conv" in page.open_groups()
    layer = resnet50.get_layer("conv5_block3_2_conv")
    flops = next(row["flops"] for row in profile(resnet50).rows if row["node"] == "conv5_block3_2_conv[0]")
    card = page.card()
    assert f"parameters\t{layer.count_params():,}" in card and f"{flops:,} FLOPs" in card
    assert "conv5_block3_2_conv[0]\t(None, 1, 1, 512) → (None, 1, 1, 512)" in card and "filters\t512" in card
    assert page.run("return document.querySelector('.nwv-count').textContent") == "1 of 1"
    assert_no_overlap(page.shown())


def test_a_big_graph_starts_small_and_opens_a_segment(browser, tmp_path, densenet):
    page = open_page(browser, tmp_path, densenet)
    boxes = page.shown()
    assert page.closed() == visible_keys(page.data, "layer") and len(boxes) <= 30
    segment = min(key for key, (kind, *_) in boxes.items() if kind == "segment")
    page.toggle(segment)
    boxes = page.shown()
    assert page.closed() == visible_keys(page.data, "layer", page.open_groups())
    assert segment in page.open_groups() and sum(kind == "box" for kind, *_ in boxes.values()) > 50
    assert page.edges() == expected_edges(page.data, "layer", page.open_groups())
    assert_no_overlap(boxes)


def test_views_on_one_page_do_not_collide(browser, tmp_path):
    small = dropout_chain(3)
    fragments = [to_html(zoo()), to_html(small, height=300), to_html(zoo())]  # the same view twice, too
    path = tmp_path / "three.html"
    path.write_text("<!DOCTYPE html><html><body><h1>Notebook</h1>" + "".join(fragments) + "</body></html>")
    page = Page(browser, path, fragments[0])
    page.wait("return document.querySelectorAll('.nwv[data-ready]').length === 3")
    assert [len(page.shown(root)) for root in range(3)] == [17, 4, 17]
    assert page.run("return Array.from(document.querySelectorAll('.nwv'), r => r.style.height)") == [
        "600px", "300px", "600px"]
    page.driver.find_elements("css selector", ".nwv-search")[1].send_keys("drop1")
    assert page.run("return Array.from(document.querySelectorAll('.nwv'), r => r.querySelectorAll('.nwv-match')"
                    ".length)") == [0, 1, 0]


# How front ends run an output's scripts after setting its innerHTML (which runs none): JupyterLab
# (evalInnerHTMLScriptTags) puts a copy in each script's place; VS Code's renderer appends a copy of
# each to the output element and removes it at once.
RUN_SCRIPTS = {
    "jupyterlab": "old.parentNode.replaceChild(copy, old);",
    "vscode": "output.appendChild(copy).parentNode.removeChild(copy);",
}


@pytest.mark.parametrize("front_end", sorted(RUN_SCRIPTS))
def test_a_view_inserted_as_notebooks_insert_outputs(browser, tmp_path, front_end):
    path = tmp_path / "host.html"
    path.write_text("<!DOCTYPE html><html><body><div id='output'></div></body></html>")
    browser.get(path.as_uri())
    browser.execute_script("""
        const output = document.getElementById('output');
        output.innerHTML = arguments[0];
        for (const old of Array.from(output.getElementsByTagName('script'))) {
          const copy = document.createElement('script');
          copy.text = old.text;
          if (old.type) copy.type = old.type;
          new Function('output', 'old', 'copy', arguments[1])(output, old, copy);
        }""", to_html(zoo()), RUN_SCRIPTS[front_end])
    assert browser.execute_script("return document.querySelector('.nwv').dataset.ready") == "true"
    assert len(browser.find_elements("css selector", ".nwv [data-kind='box']")) == 14
    assert browser.execute_script("return document.querySelector('.nwv').style.height") == "600px"
    assert browser.execute_script("return getComputedStyle(document.querySelector('.nwv-nojs')).display") == "none"
    assert browser.get_log("browser") == []


def test_names_reach_the_page_as_text(browser, tmp_path):
    x = Input(shape=(3,), name="x")
    name = "d<img src=x onerror=document.title='hacked'>"
    page = open_page(browser, tmp_path, Model(x, Dense(2, name=name)(x), name="m"))
    assert page.run("return document.querySelectorAll('.nwv img').length") == 0
    assert page.run("return document.querySelector('.nwv-box:last-of-type .nwv-name').textContent") == name
    assert page.run("return document.title") == "m"


@pytest.mark.slow  # Keras builds ResNet50 once for the module: 5-15 s on 2 cores
def test_drag_pans_the_wheel_zooms_and_fit_shows_everything(browser, tmp_path, resnet50):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

    page = open_page(browser, tmp_path, resnet50)
    transform = "return document.querySelector('.nwv-svg > g').getAttribute('transform')"

    def numbers():
        return [float(n) for n in re.findall(r"-?[\d.]+", page.run(transform))]

    x, y, scale = numbers()
    stage = page.driver.find_element("css selector", ".nwv-svg")
    ActionChains(page.driver).move_to_element_with_offset(stage, -400, 0).click_and_hold() \
        .move_by_offset(120, -200).release().perform()
    assert numbers() == pytest.approx([x + 120, y - 200, scale])
    ActionChains(page.driver).scroll_from_origin(ScrollOrigin.from_element(stage), 0, -300).perform()
    assert numbers()[2] > scale
    page.click(".nwv-fit")
    inside = page.run("""
        const stage = document.querySelector('.nwv-stage').getBoundingClientRect();
        return Array.from(document.querySelectorAll('[data-item] > .nwv-body'), e => e.getBoundingClientRect())
          .every(r => r.left >= stage.left && r.right <= stage.right && r.top >= stage.top && r.bottom <= stage.bottom);""")
    assert inside and numbers()[2] < scale
