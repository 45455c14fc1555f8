//===- PlanSVG.cpp - Plans drawn as in Tofu's Figure 11 -------------------===//
//
// Two sections: the weights, and the activations of the forward pass, each
// wrapped into lines of at most 1200 pixels. Each tensor is a square whose
// vertical axis is its first dimension and whose horizontal axis is the
// rest; each device's tile is filled with the device's colour. Runs of
// tensors tiled alike, and repeated blocks of them, are drawn once with
// "×N". Few tensors are named; a legend shows the devices grouped by the
// outermost level of the hierarchy and says what the marks mean.
//
//===----------------------------------------------------------------------===//

#include "tofu/PlanIO/PlanIO.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace tofu;

namespace {

constexpr int kBox = 48, kGap = 26, kLabel = 30, kMargin = 20, kTitle = 24;
/// The widest picture before a section wraps into another line.
constexpr int kMaxWidth = 1200;
/// Room after a repeated block for its "xN".
constexpr int kRepeat = 12;
/// The side of a device's colour square in the legend.
constexpr int kSwatch = 14;
/// Pictures of at most this many squares name each tensor.
constexpr size_t kMaxNamed = 24;

/// One drawn tensor: its index and how many times its block repeats.
struct Item {
  int tensor;
  std::string signature;
};

/// Each device's tile as fractions [x0, x1) x [y0, y1) of the square.
struct Tile {
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool replicated = false;
};

std::vector<Tile> tilesOf(const Plan &plan, int t) {
  std::vector<Tile> tiles(1);
  for (const PlanStep &s : plan.steps) {
    std::vector<Tile> next;
    for (const Tile &tile : tiles)
      for (unsigned w = 0; w < s.k; ++w) {
        Tile sub = tile;
        Tiling tl = s.tilings[t];
        if (tl.kind == Tiling::Kind::Cut && tl.dim == 0) {
          double h = (tile.y1 - tile.y0) / s.k;
          sub.y0 = tile.y0 + w * h;
          sub.y1 = sub.y0 + h;
        } else if (tl.kind == Tiling::Kind::Cut) {
          double wd = (tile.x1 - tile.x0) / s.k;
          sub.x0 = tile.x0 + w * wd;
          sub.x1 = sub.x0 + wd;
        } else {
          sub.replicated = true;
        }
        next.push_back(sub);
      }
    tiles = std::move(next);
  }
  return tiles;
}

std::string signatureOf(const Graph &graph, const Plan &plan, int t) {
  std::string s;
  for (int64_t d : graph.tensors[t].shape)
    s += std::to_string(d) + "x";
  for (const PlanStep &step : plan.steps)
    s += step.tilings[t].str();
  return s;
}

/// Folds repeated blocks (period up to 32): (first item, block, count).
std::vector<std::pair<std::vector<int>, unsigned>>
fold(const std::vector<Item> &items) {
  std::vector<std::pair<std::vector<int>, unsigned>> out;
  size_t i = 0;
  while (i < items.size()) {
    size_t bestPeriod = 1;
    unsigned bestCount = 1;
    for (size_t p = 1; p <= 32 && i + 2 * p <= items.size(); ++p) {
      unsigned count = 1;
      while (i + (count + 1) * p <= items.size()) {
        bool same = true;
        for (size_t j = 0; j < p && same; ++j)
          same = items[i + j].signature == items[i + count * p + j].signature;
        if (!same)
          break;
        ++count;
      }
      if (count > 1 && count * p > bestCount * bestPeriod) {
        bestPeriod = p;
        bestCount = count;
      }
    }
    std::vector<int> block;
    for (size_t j = 0; j < bestPeriod; ++j)
      block.push_back(items[i + j].tensor);
    out.push_back({block, bestCount});
    i += bestPeriod * bestCount;
  }
  return out;
}

std::string escape(const std::string &s) {
  std::string r;
  for (char c : s) {
    if (c == '<')
      r += "&lt;";
    else if (c == '>')
      r += "&gt;";
    else if (c == '&')
      r += "&amp;";
    else
      r += c;
  }
  return r;
}

} // namespace

std::string tofu::drawPlanSVG(const Graph &graph, const Plan &plan) {
  // As in the paper, the tensors of the forward operators that read a
  // weight (convolutions, matrix products): the weights, and the data they
  // are applied to.
  std::vector<Item> weights, activations;
  std::vector<bool> seen(graph.tensors.size(), false);
  for (const OpNode &op : graph.ops) {
    if (op.backward || op.updateOf >= 0 || op.gradientAccumulation)
      continue;
    bool readsWeight = false;
    for (int t : op.inputs)
      readsWeight |= t >= 0 && graph.tensors[t].role == TensorRole::Weight &&
                     graph.tensors[t].shape.size() >= 2;
    if (!readsWeight)
      continue;
    for (int t : op.inputs) {
      if (t < 0 || seen[t] || graph.tensors[t].shape.size() < 2)
        continue;
      const TensorNode &tn = graph.tensors[t];
      if (tn.role != TensorRole::Weight && tn.role != TensorRole::Input &&
          tn.role != TensorRole::Activation)
        continue;
      seen[t] = true;
      (tn.role == TensorRole::Weight ? weights : activations)
          .push_back({t, signatureOf(graph, plan, t)});
    }
  }
  unsigned devices = std::max(1u, plan.topology.getNumDevices());
  std::vector<std::pair<std::vector<int>, unsigned>> weightBlocks =
      fold(weights);
  std::vector<std::pair<std::vector<int>, unsigned>> activationBlocks =
      fold(activations);
  size_t drawn = 0;
  for (const auto *blocks : {&weightBlocks, &activationBlocks})
    for (const auto &[block, count] : *blocks)
      drawn += block.size();
  // Names under the squares when there are few of them.
  bool named = drawn <= kMaxNamed;
  int lineHeight = kBox + kLabel + (named ? 10 : 0);
  std::string body;
  int width = 0;
  char buf[512];
  // Draws a section from `y` (its title above), wrapping its blocks into
  // lines of at most kMaxWidth; returns the y below it.
  auto drawSection = [&](const char *title, size_t total,
                         const std::vector<std::pair<std::vector<int>,
                                                     unsigned>> &blocks,
                         int y) {
    std::snprintf(buf, sizeof(buf),
                  "<text x='%d' y='%d' font-size='14' font-weight='bold'>%s "
                  "(%zu)</text>\n",
                  kMargin, y - 8, title, total);
    body += buf;
    int x = kMargin;
    for (auto &[block, count] : blocks) {
      int blockWidth =
          int(block.size()) * (kBox + kGap) + (count > 1 ? kRepeat : 0);
      if (x > kMargin && x + blockWidth > kMaxWidth - kMargin) {
        x = kMargin;
        y += lineHeight;
      }
      int x0 = x;
      for (int t : block) {
        std::vector<Tile> tiles = tilesOf(plan, t);
        for (size_t d = 0; d < tiles.size(); ++d) {
          const Tile &tile = tiles[d];
          std::snprintf(
              buf, sizeof(buf),
              "<rect x='%.2f' y='%.2f' width='%.2f' height='%.2f' "
              "fill='hsl(%u,65%%,60%%)' fill-opacity='%s' stroke='#333' "
              "stroke-width='0.5'><title>%s device %zu</title></rect>\n",
              x + tile.x0 * kBox, y + tile.y0 * kBox,
              (tile.x1 - tile.x0) * kBox, (tile.y1 - tile.y0) * kBox,
              (unsigned)(360.0 * d / devices), tile.replicated ? "0.35" : "1",
              escape(graph.tensors[t].name).c_str(), d);
          body += buf;
        }
        std::string shape;
        for (size_t i = 0; i < graph.tensors[t].shape.size(); ++i)
          shape += (i ? "x" : "") + std::to_string(graph.tensors[t].shape[i]);
        std::snprintf(buf, sizeof(buf),
                      "<text x='%d' y='%d' font-size='8'>%s</text>\n", x,
                      y + kBox + 10, escape(shape).c_str());
        body += buf;
        if (named) {
          std::string name = graph.tensors[t].name;
          if (name.size() > 12)
            name = name.substr(0, 11) + "~";
          std::snprintf(buf, sizeof(buf),
                        "<text x='%d' y='%d' font-size='8' "
                        "fill='#555'>%s</text>\n",
                        x, y + kBox + 20, escape(name).c_str());
          body += buf;
        }
        x += kBox + kGap;
      }
      if (count > 1) {
        std::snprintf(buf, sizeof(buf),
                      "<rect x='%d' y='%d' width='%d' height='%d' "
                      "fill='none' stroke='#999' stroke-dasharray='4 2'/>\n"
                      "<text x='%d' y='%d' font-size='11'>&#215;%u</text>\n",
                      x0 - 4, y - 4, x - x0 - kGap + 8, kBox + 18, x - kGap + 6,
                      y + kBox / 2, count);
        body += buf;
        x += kRepeat;
      }
      width = std::max(width, x + kMargin);
    }
    return y + lineHeight + kTitle;
  };
  int y = kMargin + kTitle + 8;
  y = drawSection("weights", weights.size(), weightBlocks, y);
  y = drawSection("activations", activations.size(), activationBlocks, y);

  // The legend: the devices by their place in the hierarchy (one box per
  // group of the outermost level), the replicated tiles and the repeats.
  std::snprintf(buf, sizeof(buf),
                "<text x='%d' y='%d' font-size='14' font-weight='bold'>"
                "devices (%s)</text>\n",
                kMargin, y - 8, escape(plan.topology.str()).c_str());
  body += buf;
  unsigned groups = plan.topology.levels.empty()
                        ? 1
                        : std::max(1u, plan.topology.levels.front());
  unsigned perGroup = std::max(1u, devices / groups);
  int x = kMargin;
  for (unsigned g = 0; g < groups; ++g) {
    int gx = x;
    for (unsigned i = 0; i < perGroup; ++i) {
      unsigned d = g * perGroup + i;
      if (x + kSwatch + kMargin > kMaxWidth) {
        x = kMargin;
        y += kSwatch + 18;
        gx = x;
      }
      std::snprintf(buf, sizeof(buf),
                    "<rect x='%d' y='%d' width='%d' height='%d' "
                    "fill='hsl(%u,65%%,60%%)' stroke='#333' "
                    "stroke-width='0.5'/>\n<text x='%d' y='%d' "
                    "font-size='8'>%u</text>\n",
                    x, y, kSwatch, kSwatch, (unsigned)(360.0 * d / devices),
                    x + 2, y + kSwatch + 9, d);
      body += buf;
      x += kSwatch + 4;
    }
    if (groups > 1) {
      std::snprintf(buf, sizeof(buf),
                    "<rect x='%d' y='%d' width='%d' height='%d' fill='none' "
                    "stroke='#666'/>\n",
                    gx - 3, y - 3, x - gx + 2, kSwatch + 16);
      body += buf;
    }
    x += 10;
    width = std::max(width, x + kMargin);
  }
  y += kSwatch + 30;
  const char *notes[] = {
      "A square is a tensor: its first dimension down, the others across; "
      "each device's tile has the device's colour.",
      "A faded tile is replicated: several devices hold it.",
      "A dashed box with xN is a block of tensors that repeats N times, "
      "drawn once.",
  };
  for (const char *note : notes) {
    std::snprintf(buf, sizeof(buf),
                  "<text x='%d' y='%d' font-size='10'>%s</text>\n", kMargin,
                  y, note);
    body += buf;
    y += 14;
  }
  std::string title = std::string("tofu plan (") +
                      stringifyAlgorithm(plan.algorithm) + ") on " +
                      plan.topology.str() + " devices: ";
  std::snprintf(buf, sizeof(buf), "%.0f", plan.totalBytes);
  title += buf;
  title += " bytes per step (cost model)";
  // About 7 pixels per character at 12 px, 5.5 at 10 px.
  width = std::max({width, int(title.size()) * 7 + 2 * kMargin,
                    int(std::strlen(notes[0]) * 11 / 2) + 2 * kMargin});
  int height = y + kMargin;
  std::snprintf(buf, sizeof(buf),
                "<svg xmlns='http://www.w3.org/2000/svg' width='%d' "
                "height='%d' font-family='sans-serif'>\n"
                "<text x='%d' y='16' font-size='12'>%s</text>\n",
                width, height, kMargin, escape(title).c_str());
  return buf + body + "</svg>\n";
}
