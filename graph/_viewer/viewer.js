/* nodeweave's interactive graph view. graph/html_view.py inlines it after dagre, inside a
   function of its own, so the page gains no global. Every view finds its root by the
   data-nwv-view attribute its page carries; user strings only ever reach textContent. */
var nodeweaveView = (function () {
  "use strict";

  // The SVG namespace as the HTML parser gives it, so that no address appears in the page.
  var SVG_NS = (function () {
    var holder = document.createElement("div");
    holder.innerHTML = "<svg></svg>";
    return holder.firstChild.namespaceURI;
  })();
  var FONT_FAMILY = "Helvetica, Arial, sans-serif";
  var NAME_FONT = "bold 12px " + FONT_FAMILY;
  var DETAIL_FONT = "11px " + FONT_FAMILY;
  var BOX_HEIGHT = 38;
  var GROUP_HEIGHT = 42;
  var TITLE_HEIGHT = 24;
  var PAD = 12;
  var NOUNS = { layer: ["layer", "layers"], node: ["call", "calls"] };

  function startAll(viewId) {
    var roots = document.querySelectorAll('div.nwv[data-nwv-view="' + viewId + '"]');
    for (var i = 0; i < roots.length; i++) {
      if (roots[i].hasAttribute("data-nwv-started")) continue;
      roots[i].setAttribute("data-nwv-started", "true");
      try {
        new View(roots[i]);
      } catch (error) {
        roots[i].setAttribute("data-error", String(error));
        var message = document.createElement("p");
        message.className = "nwv-failed";
        message.textContent = "The graph view failed: " + error;
        roots[i].appendChild(message);
        throw error;
      }
    }
  }

  function svg(tag, attributes, parent) {
    var element = document.createElementNS(SVG_NS, tag);
    for (var name in attributes) element.setAttribute(name, attributes[name]);
    if (parent) parent.appendChild(element);
    return element;
  }

  function html(tag, className, parent, text) {
    var element = document.createElement(tag);
    if (className) element.className = className;
    if (text !== undefined) element.textContent = text;
    if (parent) parent.appendChild(element);
    return element;
  }

  var measureContext = null;
  var widths = {};
  function textWidth(text, font) {
    var id = font + "\u0000" + text;
    if (!(id in widths)) {
      if (!measureContext) measureContext = document.createElement("canvas").getContext("2d");
      measureContext.font = font;
      widths[id] = measureContext.measureText(text).width;
    }
    return widths[id];
  }

  function number(value) {
    return value === null || value === undefined ? "unknown" : Number(value).toLocaleString("en-US");
  }

  function size(bytes) {
    if (bytes === null || bytes === undefined) return "unknown";
    var units = ["B", "KB", "MB", "GB", "TB"];
    var value = bytes;
    for (var i = 0; i < units.length; i++) {
      if (value < 1024 || i === units.length - 1) return value.toFixed(2) + " " + units[i];
      value /= 1024;
    }
  }

  function compact(value) {
    var magnitude = Math.abs(value);
    if (magnitude >= 1e9) return (value / 1e9).toPrecision(3) + "G";
    if (magnitude >= 1e6) return (value / 1e6).toPrecision(3) + "M";
    if (magnitude >= 1e3) return (value / 1e3).toPrecision(3) + "k";
    return String(Math.round(value * 100) / 100);
  }

  /* One level ("layer" or "node") of the data: its tree of boxes and groups, with what
     each group's own layout needs (the edges between its children). */
  function Level(name, raw, data) {
    this.name = name;
    this.data = data;
    this.legend = raw.legend || null;
    var items = this.items = raw.items.map(function (entry) {
      return typeof entry === "number" ? { kind: "box", ref: entry } : entry;
    });
    items[0].parent = null;
    for (var i = 0; i < items.length; i++) {
      var item = items[i];
      item.id = i;
      if (item.children) item.children.forEach(function (child) { items[child].parent = i; });
      if (item.kind === "box" || item.kind === "model") {
        var call = name === "node" ? data.calls[item.ref] : null;
        var layer = call ? data.layers[call.layer] : data.layers[item.ref];
        item.layer = layer;
        item.layerIndex = call ? call.layer : item.ref;
        item.call = call;
        if (item.kind === "box") item.key = call ? call.key : layer.key;
        item.path = call ? call.path : layer.key;
        item.name = call && distinctCallNames(layer, data) > 1 ? call.name : layer.name;
        item.className = layer["class"];
      } else {
        item.name = item.kind === "root" ? data.title : item.title;
        item.className = "";
      }
      if (item.kind === "model") item.title = item.name + " (" + item.className + ")";
      item.layout = null;
    }
    (raw.colours || []).forEach(function (colour) {
      items[colour[0]].value = colour[1];
      items[colour[0]].fill = colour[2];
    });
    this.depth = new Int32Array(items.length);
    for (i = 0; i < items.length; i++) {
      var depth = 0;
      for (var up = items[i].parent; up !== null && up !== undefined; up = items[up].parent) depth++;
      this.depth[i] = depth;
    }
    this.edges = raw.edges;
    this.outgoing = items.map(function () { return []; });
    this.incoming = items.map(function () { return []; });
    var seen = {};
    for (i = 0; i < raw.edges.length; i += 2) {
      var a = raw.edges[i], b = raw.edges[i + 1];
      this.outgoing[a].push(b);
      this.incoming[b].push(a);
      var pair = this.siblings(a, b);
      var group = items[pair[0]].parent;
      var id = pair[0] + "," + pair[1];
      if (seen[id]) continue;
      seen[id] = true;
      (items[group].layoutEdges = items[group].layoutEdges || []).push(pair);
    }
  }

  function distinctCallNames(layer, data) {
    if (layer.distinctCalls === undefined) {
      var names = {};
      layer.calls.forEach(function (index) { names[data.calls[index].name] = true; });
      layer.distinctCalls = Object.keys(names).length;
    }
    return layer.distinctCalls;
  }

  /* The children of the lowest group holding both boxes that hold each of them. */
  Level.prototype.siblings = function (a, b) {
    var items = this.items, depth = this.depth;
    while (depth[a] > depth[b]) a = items[a].parent;
    while (depth[b] > depth[a]) b = items[b].parent;
    while (items[a].parent !== items[b].parent) {
      a = items[a].parent;
      b = items[b].parent;
    }
    return [a, b];
  };

  Level.prototype.ancestors = function (id) {
    var found = [];
    for (var up = this.items[id].parent; up !== null && up !== undefined; up = this.items[up].parent) found.push(up);
    return found;
  };

  Level.prototype.leavesOf = function (id) {
    var leaves = [], stack = [id];
    while (stack.length) {
      var item = this.items[stack.pop()];
      if (item.kind === "box") leaves.push(item.id);
      else for (var i = item.children.length - 1; i >= 0; i--) stack.push(item.children[i]);
    }
    return leaves;
  };

  /* Which item shows each item: itself when shown, else its outermost closed group. */
  Level.prototype.visibility = function () {
    var items = this.items;
    var shownAs = new Int32Array(items.length).fill(-1);
    var stack = [[0, -1]];
    while (stack.length) {
      var top = stack.pop(), id = top[0], owner = top[1];
      var item = items[id];
      shownAs[id] = owner >= 0 ? owner : id;
      if (item.kind === "box") continue;
      var childOwner = owner >= 0 ? owner : (item.open ? -1 : id);
      for (var i = 0; i < item.children.length; i++) stack.push([item.children[i], childOwner]);
    }
    return shownAs;
  };

  Level.prototype.boxSize = function (item) {
    if (item.kind === "box") {
      var detail = item.className + "  " + (item.call ? item.call.out : this.outputsOfLayer(item.layer));
      var width = Math.max(textWidth(item.name, NAME_FONT), textWidth(detail, DETAIL_FONT)) + 20;
      item.detail = detail;
      return [Math.max(64, Math.ceil(width)), BOX_HEIGHT];
    }
    var noun = NOUNS[this.name][item.leaves === 1 ? 0 : 1];
    item.detail = item.leaves + " " + noun + (item.kind === "model" ? "" : "  (" + item.kind + ")");
    var groupWidth = Math.max(textWidth("\u25b8 " + item.title, NAME_FONT), textWidth(item.detail, DETAIL_FONT)) + 30;
    return [Math.max(80, Math.ceil(groupWidth)), GROUP_HEIGHT];
  };

  Level.prototype.outputsOfLayer = function (layer) {
    if (layer.outText === undefined) {
      var texts = {};
      layer.calls.forEach(function (index) { texts[this.data.calls[index].out] = true; }, this);
      layer.outText = Object.keys(texts).join("; ");
    }
    return layer.outText;
  };

  /* Lays out an open group: its children (closed groups as boxes, open ones at the size of
     their own layout) and the edges between them. Cached until a group inside it opens or closes. */
  Level.prototype.layout = function (item) {
    if (item.layout) return item.layout;
    var graph = new dagre.graphlib.Graph();
    graph.setGraph({ rankdir: "TB", nodesep: 18, ranksep: 26, edgesep: 8, marginx: 0, marginy: 0 });
    graph.setDefaultEdgeLabel(function () { return {}; });
    var sizes = {};
    for (var i = 0; i < item.children.length; i++) {
      var child = this.items[item.children[i]];
      var extent = child.kind !== "box" && child.open ? this.layout(child).size : this.boxSize(child);
      sizes[child.id] = extent;
      graph.setNode(String(child.id), { width: extent[0], height: extent[1] });
    }
    (item.layoutEdges || []).forEach(function (pair) { graph.setEdge(String(pair[0]), String(pair[1])); });
    dagre.layout(graph);
    var width = graph.graph().width || 0, height = graph.graph().height || 0;
    var result = { centres: {}, sizes: sizes, points: {} };
    if (item.kind === "root") {
      result.size = [width, height];
      result.offset = [0, 0];
    } else {
      var outer = Math.max(width, textWidth("\u25be " + item.title, NAME_FONT) + 24) + 2 * PAD;
      result.size = [outer, height + TITLE_HEIGHT + 2 * PAD];
      result.offset = [(outer - width) / 2, TITLE_HEIGHT + PAD];
    }
    graph.nodes().forEach(function (id) {
      var node = graph.node(id);
      result.centres[id] = [node.x, node.y];
    });
    graph.edges().forEach(function (edge) {
      result.points[edge.v + "," + edge.w] = graph.edge(edge).points;
    });
    item.layout = result;
    return result;
  };

  /* The last part of a key is the name: "outer/inner/dense" is layer dense, "outer[0]/dense[1]" call dense[1].
     A layer's key is its qualified name; a call's is "<its layer's key>[k]" ("outer/dense[1]", as get_node takes it). */
  function nameKeys(data) {
    var last = function (key) { return key.slice(key.lastIndexOf("/") + 1); };
    data.layers.forEach(function (layer) { layer.name = last(layer.key); });
    data.calls.forEach(function (call) {
      call.name = last(call.key);
      call.path = data.layers[call.layer].key + call.name.slice(call.name.lastIndexOf("["));
    });
  }

  /* The page of one view. */
  function View(root) {
    this.root = root;
    var data = JSON.parse(root.querySelector('script[type="application/json"]').textContent);
    nameKeys(data);
    this.data = data;
    var nojs = root.querySelector(".nwv-nojs");
    if (nojs) nojs.style.display = "none";
    this.levels = {};
    for (var name in data.levels) {
      this.levels[name] = new Level(name, data.levels[name], data);
    }
    this.levelName = "layer";
    this.selected = null;
    this.trace = null;
    this.matches = [];
    this.current = -1;
    this.transform = { scale: 1, x: 0, y: 0 };
    this.renders = 0;
    this.build();
    this.fillWindow();
    this.initialView();
    root.setAttribute("data-ready", "true");
  }

  View.prototype.level = function () { return this.levels[this.levelName]; };

  View.prototype.build = function () {
    var root = this.root, self = this;
    var bar = html("div", "nwv-bar", root);
    html("span", "nwv-title", bar, this.data.title);
    this.search = html("input", "nwv-search", bar);
    this.search.type = "search";
    this.search.placeholder = "search path or class";
    this.search.setAttribute("aria-label", "search layers by qualified name (inner/dense) or class");
    this.count = html("span", "nwv-count", bar);
    var toggle = html("label", "nwv-toggle", bar);
    this.perCall = html("input", null, toggle);
    this.perCall.type = "checkbox";
    toggle.appendChild(document.createTextNode(" per call"));
    this.fitButton = html("button", "nwv-fit", bar, "fit");
    this.fitButton.type = "button";
    this.stage = html("div", "nwv-stage", root);
    this.canvas = svg("svg", { "class": "nwv-svg" }, this.stage);
    this.viewport = svg("g", {}, this.canvas);
    this.groupLayer = svg("g", { "class": "nwv-groups" }, this.viewport);
    this.edgeLayer = svg("g", { "class": "nwv-edges" }, this.viewport);
    this.boxLayer = svg("g", { "class": "nwv-boxes" }, this.viewport);
    this.card = html("div", "nwv-card", this.stage);
    this.card.style.display = "none";
    this.legend = html("div", "nwv-legend", this.stage);

    this.search.addEventListener("input", function () { self.find(); });
    this.search.addEventListener("keydown", function (event) {
      if (event.key === "Enter") {
        event.preventDefault();
        self.step(event.shiftKey ? -1 : 1);
      } else if (event.key === "Escape") {
        self.search.value = "";
        self.find();
      }
    });
    this.perCall.addEventListener("change", function () {
      self.levelName = self.perCall.checked ? "node" : "layer";
      self.selected = null;
      self.trace = null;
      self.card.style.display = "none";
      self.find();
      self.initialView();
    });
    this.fitButton.addEventListener("click", function () { self.fit(); });
    this.listenPointer();
  };

  /* A page of its own fills the window; in a notebook, or beside anything else, the view keeps its height. */
  View.prototype.fillWindow = function () {
    var root = this.root;
    if (root.parentNode !== document.body || document.body.children.length !== 1) return;
    var resize = function () {
      root.style.height = Math.max(300, window.innerHeight - root.getBoundingClientRect().top - 8) + "px";
    };
    resize();
    window.addEventListener("resize", resize);
  };

  View.prototype.listenPointer = function () {
    var self = this, stage = this.stage, canvas = this.canvas;
    canvas.addEventListener("wheel", function (event) {
      event.preventDefault();
      var box = canvas.getBoundingClientRect();
      self.zoomAt(event.clientX - box.left, event.clientY - box.top, Math.exp(-event.deltaY * 0.0015));
    }, { passive: false });
    canvas.addEventListener("mousedown", function (event) {
      if (event.button !== 0) return;
      var start = [event.clientX, event.clientY], origin = [self.transform.x, self.transform.y];
      var target = event.target, moved = false;
      stage.classList.add("nwv-panning");
      var move = function (e) {
        var dx = e.clientX - start[0], dy = e.clientY - start[1];
        if (!moved && Math.abs(dx) + Math.abs(dy) < 4) return;
        moved = true;
        self.transform.x = origin[0] + dx;
        self.transform.y = origin[1] + dy;
        self.applyTransform();
      };
      var up = function () {
        window.removeEventListener("mousemove", move);
        window.removeEventListener("mouseup", up);
        stage.classList.remove("nwv-panning");
        if (!moved) self.clicked(target);
      };
      window.addEventListener("mousemove", move);
      window.addEventListener("mouseup", up);
    });
    canvas.addEventListener("dblclick", function (event) {
      var element = event.target.closest("[data-item]");
      if (element && element.getAttribute("data-kind") !== "box") self.toggle(Number(element.getAttribute("data-item")));
    });
  };

  View.prototype.clicked = function (target) {
    var toggle = target.closest("[data-toggle]");
    var element = target.closest("[data-item]");
    if (toggle && element) {
      this.toggle(Number(element.getAttribute("data-item")));
      return;
    }
    if (element) this.select(Number(element.getAttribute("data-item")));
    else this.select(null);
  };

  /* Opens or closes a group, keeping the middle of its top where it is on the screen; a group
     opened wider or taller than the view is zoomed out to fit, down to a readable scale. */
  View.prototype.toggle = function (id, open) {
    var level = this.level(), item = level.items[id];
    if (item.kind === "box" || item.kind === "root") return;
    var wanted = open === undefined ? !item.open : open;
    if (wanted === item.open) return;
    var before = this.rects[id];
    item.open = wanted;
    this.invalidate(id);
    this.render();
    var after = this.rects[id], t = this.transform;
    if (before && after) {
      var anchor = [(before.x + before.w / 2) * t.scale + t.x, before.y * t.scale + t.y];
      if (wanted) {
        var height = this.stage.clientHeight || 600;
        var room = Math.min(((this.stage.clientWidth || 800) - 40) / after.w, (height - 40) / after.h);
        t.scale = Math.max(Math.min(t.scale, room), Math.min(t.scale, 0.5));
        anchor[1] = Math.max(20, Math.min(anchor[1], height - 20 - after.h * t.scale));
      }
      t.x = anchor[0] - (after.x + after.w / 2) * t.scale;
      t.y = anchor[1] - after.y * t.scale;
      this.applyTransform();
    }
    if (this.selected === id) this.showCard(id);
  };

  View.prototype.invalidate = function (id) {
    var level = this.level();
    level.items[id].layout = null;
    level.ancestors(id).forEach(function (up) { level.items[up].layout = null; });
  };

  /* Lays out what is open (from the cache where nothing changed) and draws it. */
  View.prototype.render = function () {
    var level = this.level(), items = level.items;
    var root = items[0];
    level.layout(root);
    var rects = {};
    var stack = [[0, 0, 0]];
    while (stack.length) {
      var top = stack.pop(), group = items[top[0]];
      var layout = group.layout;
      for (var i = group.children.length - 1; i >= 0; i--) {
        var id = group.children[i];
        var centre = layout.centres[id], extent = layout.sizes[id];
        var x = top[1] + layout.offset[0] + centre[0] - extent[0] / 2;
        var y = top[2] + layout.offset[1] + centre[1] - extent[1] / 2;
        rects[id] = { x: x, y: y, w: extent[0], h: extent[1] };
        var child = items[id];
        if (child.kind !== "box" && child.open) stack.push([id, x, y]);
      }
    }
    this.rects = rects;
    this.shownAs = level.visibility();
    var marks = this.marks();
    this.groupLayer.textContent = "";
    this.edgeLayer.textContent = "";
    this.boxLayer.textContent = "";
    var depth = level.depth;
    var drawn = Object.keys(rects).map(Number).sort(function (a, b) { return depth[a] - depth[b] || a - b; });
    for (var d = 0; d < drawn.length; d++) this.drawItem(items[drawn[d]], rects[drawn[d]], marks);
    this.drawEdges(marks);
    this.drawLegend();
    this.applyTransform();
    this.renders += 1;
    this.root.setAttribute("data-renders", String(this.renders));
    this.root.setAttribute("data-level", this.levelName);
  };

  /* What to highlight: matches of the search, the traced boxes, the selection. */
  View.prototype.marks = function () {
    var shownAs = this.shownAs, marks = { match: {}, holds: {}, traced: {}, current: -1 };
    this.matches.forEach(function (id) {
      if (shownAs[id] === id) marks.match[id] = true;
      else marks.holds[shownAs[id]] = true;
    });
    if (this.current >= 0 && this.matches.length) marks.current = this.matches[this.current];
    if (this.trace) {
      var traced = this.trace.set;
      Object.keys(traced).forEach(function (id) {
        marks.traced[shownAs[id]] = true;
      });
      marks.tracedLeaves = traced;
    }
    marks.selected = this.selected;
    return marks;
  };

  View.prototype.drawItem = function (item, rect, marks) {
    var open = item.kind !== "box" && item.open;
    var classes = [item.kind === "box" ? "nwv-box" : "nwv-group nwv-" + item.kind + (open ? " nwv-open" : " nwv-closed")];
    if (marks.match[item.id]) classes.push("nwv-match");
    if (marks.holds[item.id]) classes.push("nwv-holds-match");
    if (marks.current === item.id) classes.push("nwv-current");
    if (marks.traced[item.id]) classes.push("nwv-traced");
    if (marks.selected === item.id) classes.push("nwv-selected");
    if (item.fill) classes.push("nwv-filled");
    var element = svg("g", {
      "class": classes.join(" "),
      "data-item": String(item.id),
      "data-key": item.key,
      "data-kind": item.kind,
      transform: "translate(" + rect.x + "," + rect.y + ")"
    }, open ? this.groupLayer : this.boxLayer);
    if (item.kind !== "box") element.setAttribute("data-open", String(open));
    var tooltip = svg("title", {}, element);
    tooltip.textContent = item.kind === "box" ? item.path + " (" + item.className + ")" : item.title;
    if (open) {
      svg("rect", { "class": "nwv-frame", width: rect.w, height: rect.h, rx: 6 }, element);
      var bar = svg("rect", { "class": "nwv-titlebar", width: rect.w, height: TITLE_HEIGHT, rx: 6 }, element);
      bar.setAttribute("data-toggle", "true");
      var heading = svg("text", { x: 10, y: 16, "class": "nwv-name" }, element);
      heading.textContent = "\u25be " + item.title;
      heading.setAttribute("data-toggle", "true");
      return;
    }
    if (item.kind !== "box") {
      svg("rect", { "class": "nwv-stack", x: 4, y: 4, width: rect.w, height: rect.h, rx: 5 }, element);
    }
    var body = svg("rect", { "class": "nwv-body", width: rect.w, height: rect.h, rx: 5 }, element);
    if (item.fill) body.style.fill = item.fill;
    var name = svg("text", { x: 10, y: 16, "class": "nwv-name" }, element);
    name.textContent = item.kind === "box" ? item.name : "\u25b8 " + item.title;
    if (item.kind !== "box") name.setAttribute("data-toggle", "true");
    var detail = svg("text", { x: 10, y: 31, "class": "nwv-detail" }, element);
    detail.textContent = item.detail;
  };

  View.prototype.drawEdges = function (marks) {
    var level = this.level(), items = level.items, shownAs = this.shownAs, rects = this.rects;
    var edges = level.edges, drawn = {}, list = [];
    var leaves = marks.tracedLeaves;
    for (var i = 0; i < edges.length; i += 2) {
      var a = shownAs[edges[i]], b = shownAs[edges[i + 1]];
      if (a === b) continue;
      var id = a + "," + b;
      var traced = !!(leaves && leaves[edges[i]] && leaves[edges[i + 1]]);
      if (id in drawn) {
        drawn[id].traced = drawn[id].traced || traced;
        continue;
      }
      drawn[id] = { a: a, b: b, traced: traced };
      list.push(drawn[id]);
    }
    for (var j = 0; j < list.length; j++) {
      var edge = list[j], source = items[edge.a], target = items[edge.b];
      var points;
      if (source.parent === target.parent) {
        var group = items[source.parent], origin = group.kind === "root" ? { x: 0, y: 0 } : rects[group.id];
        var offset = group.layout.offset;
        points = group.layout.points[edge.a + "," + edge.b].map(function (p) {
          return [origin.x + offset[0] + p.x, origin.y + offset[1] + p.y];
        });
      } else {
        var from = rects[edge.a], to = rects[edge.b];
        points = [[from.x + from.w / 2, from.y + from.h], [to.x + to.w / 2, to.y]];
      }
      var path = svg("path", {
        "class": "nwv-edge" + (edge.traced ? " nwv-traced" : ""),
        d: curve(points),
        "data-source": source.key,
        "data-target": target.key
      }, this.edgeLayer);
      path.setAttribute("data-edge", "true");
      svg("path", { "class": "nwv-arrow" + (edge.traced ? " nwv-traced" : ""), d: arrow(points) }, this.edgeLayer);
    }
  };

  function curve(points) {
    var first = points[0], last = points[points.length - 1];
    if (points.length === 2) {
      var bend = Math.max(20, Math.abs(last[1] - first[1]) / 2);
      return "M" + first[0] + "," + first[1] + "C" + first[0] + "," + (first[1] + bend) + " " + last[0] + "," +
        (last[1] - bend) + " " + last[0] + "," + last[1];
    }
    var d = "M" + first[0] + "," + first[1];
    for (var i = 1; i < points.length - 1; i++) {
      var mid = [(points[i][0] + points[i + 1][0]) / 2, (points[i][1] + points[i + 1][1]) / 2];
      if (i === points.length - 2) mid = last;
      d += "Q" + points[i][0] + "," + points[i][1] + " " + mid[0] + "," + mid[1];
    }
    return d;
  }

  function arrow(points) {
    var tip = points[points.length - 1], before = points[points.length - 2];
    if (points.length === 2) before = [tip[0], tip[1] - 10];
    var dx = tip[0] - before[0], dy = tip[1] - before[1], length = Math.sqrt(dx * dx + dy * dy) || 1;
    dx /= length;
    dy /= length;
    var back = [tip[0] - 8 * dx, tip[1] - 8 * dy];
    return "M" + tip[0] + "," + tip[1] + "L" + (back[0] - 4 * dy) + "," + (back[1] + 4 * dx) + "L" +
      (back[0] + 4 * dy) + "," + (back[1] - 4 * dx) + "Z";
  }

  View.prototype.drawLegend = function () {
    var legend = this.level().legend;
    this.legend.textContent = "";
    this.legend.style.display = legend ? "" : "none";
    if (!legend) return;
    html("div", "nwv-legend-title", this.legend, legend.title);
    legend.stops.forEach(function (stop) {
      var row = html("div", "nwv-legend-row", this.legend);
      html("span", "nwv-swatch", row).style.background = stop[1];
      html("span", null, row, compact(stop[0]));
    }, this);
  };

  View.prototype.applyTransform = function () {
    var t = this.transform;
    this.viewport.setAttribute("transform", "translate(" + t.x + "," + t.y + ") scale(" + t.scale + ")");
  };

  View.prototype.zoomAt = function (x, y, factor) {
    var t = this.transform, scale = Math.min(4, Math.max(0.02, t.scale * factor));
    t.x = x - (x - t.x) * (scale / t.scale);
    t.y = y - (y - t.y) * (scale / t.scale);
    t.scale = scale;
    this.applyTransform();
  };

  View.prototype.fit = function () {
    var extent = this.level().items[0].layout.size;
    var width = this.stage.clientWidth || 800, height = this.stage.clientHeight || 600;
    var scale = Math.min(1, (width - 40) / Math.max(extent[0], 1), (height - 40) / Math.max(extent[1], 1));
    this.transform = { scale: scale, x: (width - extent[0] * scale) / 2, y: (height - extent[1] * scale) / 2 };
    this.applyTransform();
  };

  /* The first view of a level: all of it when its text stays readable, else its top at a readable scale. */
  View.prototype.initialView = function () {
    this.render();
    this.fit();
    if (this.transform.scale >= 0.6) return;
    var extent = this.level().items[0].layout.size, width = this.stage.clientWidth || 800;
    this.transform.scale = 0.6;
    this.transform.x = Math.max(20, (width - extent[0] * 0.6) / 2);
    this.transform.y = 20;
    this.applyTransform();
  };

  View.prototype.centreOn = function (id) {
    var rect = this.rects[id];
    if (!rect) return;
    var t = this.transform;
    if (t.scale < 0.6) t.scale = 0.6;
    t.x = (this.stage.clientWidth || 800) / 2 - (rect.x + rect.w / 2) * t.scale;
    t.y = (this.stage.clientHeight || 600) / 2 - (rect.y + rect.h / 2) * t.scale;
    this.applyTransform();
  };

  /* The search: boxes and nested models whose qualified name ("inner/dense") or class holds the text typed. */
  View.prototype.find = function () {
    var text = this.search.value.trim().toLowerCase(), level = this.level();
    this.matches = [];
    this.current = -1;
    if (text) {
      for (var i = 0; i < level.items.length; i++) {
        var item = level.items[i];
        if (item.kind !== "box" && item.kind !== "model") continue;
        if (item.path.toLowerCase().indexOf(text) >= 0 || item.name.toLowerCase().indexOf(text) >= 0 ||
            item.className.toLowerCase().indexOf(text) >= 0) {
          this.matches.push(i);
        }
      }
    }
    this.count.textContent = text ? this.matches.length + " found" : "";
    this.render();
  };

  /* Enter: the next match, its groups opened, in the middle of the view. */
  View.prototype.step = function (direction) {
    if (!this.matches.length) return;
    this.current = (this.current + direction + this.matches.length) % this.matches.length;
    var id = this.matches[this.current], level = this.level();
    level.ancestors(id).forEach(function (up) {
      if (!level.items[up].open) {
        level.items[up].open = true;
        this.invalidate(up);
      }
    }, this);
    this.count.textContent = (this.current + 1) + " of " + this.matches.length;
    this.selected = id;
    this.render();
    this.centreOn(id);
    this.showCard(id);
  };

  View.prototype.select = function (id) {
    this.selected = id;
    this.render();
    if (id === null) this.card.style.display = "none";
    else this.showCard(id);
  };

  /* Everything upstream (direction "up") or downstream of an item, as a set of boxes. */
  View.prototype.traceFrom = function (id, direction) {
    var level = this.level(), next = direction === "up" ? level.incoming : level.outgoing;
    var set = {}, stack = level.leavesOf(id);
    stack.forEach(function (leaf) { set[leaf] = true; });
    while (stack.length) {
      var current = stack.pop();
      var neighbours = next[current];
      for (var i = 0; i < neighbours.length; i++) {
        if (!set[neighbours[i]]) {
          set[neighbours[i]] = true;
          stack.push(neighbours[i]);
        }
      }
    }
    this.trace = { set: set };
    this.render();
    this.showCard(id);
  };

  View.prototype.showCard = function (id) {
    var level = this.level(), item = level.items[id], data = this.data, self = this;
    var card = this.card;
    card.textContent = "";
    card.style.display = "";
    card.setAttribute("data-item", String(id));
    card.setAttribute("data-key", item.key === undefined ? "" : item.key);
    var close = html("button", "nwv-close", card, "\u00d7");
    close.type = "button";
    close.setAttribute("aria-label", "close");
    close.addEventListener("click", function () { self.select(null); });
    html("div", "nwv-card-name", card, item.kind === "box" || item.kind === "model" ? item.name : item.title);
    var kindText = item.kind === "run" ? "run of identical blocks" : item.kind === "segment" ? "segment" : item.className;
    html("div", "nwv-card-class", card, kindText);
    var facts = html("table", "nwv-facts", card);
    var fact = function (label, value) {
      var row = html("tr", null, facts);
      html("th", null, row, label);
      html("td", null, row, value);
    };
    if (item.kind === "box" || item.kind === "model") fact("path", item.path);
    if (item.key !== undefined && item.key !== item.path && item.kind !== "run" && item.kind !== "segment") {
      fact("key", item.key);
    }
    var leaves = level.leavesOf(id);
    var layers = {}, calls = [];
    leaves.forEach(function (leaf) {
      var entry = level.items[leaf];
      layers[entry.layerIndex] = entry.layer;
      if (entry.call) calls.push(entry.call);
      else entry.layer.calls.forEach(function (index) { calls.push(data.calls[index]); });
    });
    if (item.kind === "model") {
      layers = {};
      layers[item.layerIndex] = item.layer;
    }
    var params = 0, weightBytes = 0;
    Object.keys(layers).forEach(function (index) {
      params += layers[index].params;
      weightBytes += layers[index].weight_bytes;
    });
    var shared = item.kind === "box" && item.layer.calls.length > 1;
    fact("parameters", number(params) + (shared ? " (shared by " + item.layer.calls.length + " calls, counted once)" : ""));
    fact("weights", size(weightBytes));
    var flops = 0, bytes = 0, unknownFlops = 0, unknownBytes = 0;
    calls.forEach(function (call) {
      if (call.flops === null) unknownFlops++; else flops += call.flops;
      if (call.bytes === null) unknownBytes++; else bytes += call.bytes;
    });
    fact("FLOPs (batch 1)", (unknownFlops ? "\u2265 " : "") + number(flops) + (unknownFlops ? " (" + unknownFlops + " unknown)" : ""));
    fact("activations (batch 1)", (unknownBytes ? "\u2265 " : "") + size(bytes));
    if (item.value !== undefined && level.legend) fact(level.legend.title, number(item.value));
    if (item.kind !== "box") fact(NOUNS[level.name][1], number(leaves.length));
    if (item.kind === "box") this.cardCalls(card, item);
    if (item.kind === "box" && item.layer.config !== null) {
      html("div", "nwv-card-section", card, "config");
      var config = html("table", "nwv-config", card), values = data.configs[item.layer.config];
      Object.keys(values).forEach(function (key) {
        var row = html("tr", null, config);
        html("th", null, row, key);
        html("td", null, row, values[key]);
      });
    }
    var buttons = html("div", "nwv-buttons", card);
    var button = function (label, action) {
      var element = html("button", null, buttons, label);
      element.type = "button";
      element.setAttribute("data-action", label);
      element.addEventListener("click", action);
    };
    if (item.kind !== "box") {
      button(item.open ? "close group" : "open group", function () { self.toggle(id); });
    }
    button("upstream", function () { self.traceFrom(id, "up"); });
    button("downstream", function () { self.traceFrom(id, "down"); });
    if (this.trace) button("clear", function () { self.trace = null; self.render(); self.showCard(id); });
  };

  View.prototype.cardCalls = function (card, item) {
    var data = this.data;
    var calls = item.layer.calls.map(function (index) { return data.calls[index]; });
    html("div", "nwv-card-section", card, calls.length === 1 ? "call" : "calls");
    var table = html("table", "nwv-calls", card);
    calls.forEach(function (call) {
      var row = html("tr", call === item.call ? "nwv-this-call" : null, table);
      html("th", null, row, call.name);
      html("td", null, row, (call["in"] || "input") + " \u2192 " + call.out);
      html("td", null, row, call.flops === null ? "FLOPs unknown" : number(call.flops) + " FLOPs");
    });
  };

  return { startAll: startAll };
})();
