"""The interactive HTML view (graph.html_view): ``to_html`` seconds in Python, the first
render in headless Chromium (from navigation to the page's own ``data-ready``, recorded
in the page by a MutationObserver installed before it loads), and the page's size.

Graphs: the DenseNet-like graph of 1,701 layers (5,300 edges; goal <= 2 s each), a
residual stack of 10,000 layers (goal <= 5 s each), and ResNet50 and MobileNetV2 as
Keras builds them (weights=None, 224x224; goal <= 400 KB plus what grows with the graph).
"""

from benchmarks.harness import pin_threads

pin_threads()

import os
import statistics
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
# Runs before the page's own scripts: notes when the view marks itself laid out.
_READY_OBSERVER = """
new MutationObserver((changes, observer) => {
  for (const change of changes) {
    if (change.target.dataset && change.target.dataset.ready === 'true') {
      window.__nwvReady = performance.now();
      observer.disconnect();
    }
  }
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-ready']});
"""


def keras_application(name):
    import keras

    from engine import model_from_json

    text = getattr(keras.applications, name)(weights=None).to_json()
    keras.backend.clear_session()
    return model_from_json(text)


def big_graphs(smoke):
    from benchmarks.big_graphs import densenet_like, residual_stack

    if smoke:
        return [("densenet_like(171)", lambda: densenet_like(171))]
    return [("densenet_like(1701)", lambda: densenet_like(1701)), ("residual_stack(10000)", lambda: residual_stack(10000)),
            ("ResNet50", lambda: keras_application("ResNet50")),
            ("MobileNetV2", lambda: keras_application("MobileNetV2"))]


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tempfile.mkdtemp()}", "--window-size=1200,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _READY_OBSERVER})
    return driver


def first_render(driver, path, repeats):
    """Milliseconds from navigation to ``data-ready``, one sample per fresh load."""
    from selenium.webdriver.support.ui import WebDriverWait

    samples = []
    for _ in range(repeats):
        driver.get("about:blank")
        driver.get(Path(path).as_uri())
        WebDriverWait(driver, 120).until(lambda d: d.execute_script("return window.__nwvReady !== undefined"))
        samples.append(driver.execute_script("return window.__nwvReady") / 1000)
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def main(smoke=False):
    from benchmarks.harness import measure, save
    from graph.html_view import to_html

    repeats = 1 if smoke else 3
    driver = browser() if os.path.exists(CHROMEDRIVER) else None
    folder = tempfile.mkdtemp()
    rows = []
    print(f"{'graph':>22} {'layers':>7} {'to_html s':>10} {'render s':>9} {'page KB':>8} {'JSON KB':>8}")
    for name, make in big_graphs(smoke):
        model = make()
        result = measure({"to_html": lambda model=model: to_html(model)}, repeats=repeats, warmup=0)
        page = to_html(model)
        path = os.path.join(folder, "view.html")
        with open(path, "w", encoding="utf-8") as file:
            file.write(page)
        render = first_render(driver, path, repeats) if driver else None
        data_kb = len(page.split('class="nwv-data">', 1)[1].split("</script>", 1)[0].encode()) / 1024
        page_kb = len(page.encode()) / 1024
        layers = len(model.layers)
        render_text = f"{render['median']:9.2f}" if render else f"{'no chromium':>9}"
        print(f"{name:>22} {layers:>7} {result['to_html']['median']:10.2f} {render_text} {page_kb:8.0f} {data_kb:8.0f}",
              flush=True)
        rows.append({"graph": name, "layers": layers, "to_html_seconds": result["to_html"], "first_render_seconds": render,
                     "page_kb": page_kb, "json_kb": data_kb})
    if driver:
        driver.quit()
    save("html_view", {"rows": rows})
    return rows


if __name__ == "__main__":
    main(smoke="--smoke" in sys.argv)
