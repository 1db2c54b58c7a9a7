(function () {
  "use strict";
  var filters = document.getElementById("filters");
  var boxes = Array.prototype.slice.call(document.querySelectorAll("input[data-status-filter]"));
  var tag = document.getElementById("filter-tag");
  var text = document.getElementById("filter-text");
  var count = document.getElementById("filter-count");
  var rows = Array.prototype.slice.call(document.querySelectorAll("details.scenario"));
  var tags = rows.map(function (row) { return JSON.parse(row.getAttribute("data-tags") || "[]"); });
  var ids = rows.map(function (row) { return (row.getAttribute("data-id") || "").toLowerCase(); });
  function apply() {
    var wanted = {};
    boxes.forEach(function (box) { wanted[box.value] = box.checked; });
    var chosen = tag ? tag.value : "";
    var query = text.value.toLowerCase();
    var shown = 0;
    rows.forEach(function (row, i) {
      var ok = wanted[row.getAttribute("data-status")] === true &&
        (chosen === "" || tags[i].indexOf(chosen) >= 0) &&
        (query === "" || ids[i].indexOf(query) >= 0);
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " scenarios shown";
  }
  function expand(open) {
    rows.forEach(function (row) { if (!row.hidden) { row.open = open; } });
  }
  boxes.forEach(function (box) { box.addEventListener("change", apply); });
  if (tag) { tag.addEventListener("change", apply); }
  text.addEventListener("input", apply);
  document.getElementById("expand-all").addEventListener("click", function () { expand(true); });
  document.getElementById("collapse-all").addEventListener("click", function () { expand(false); });
  filters.hidden = false;
  apply();
})();
