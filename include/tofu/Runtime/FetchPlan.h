//===- FetchPlan.h - Who sends which box of a fetch to whom -----*- C++ -*-===//
//
// The transfers of a `tofu.fetch`, the one plan every runtime executes: the
// MPI runtime packs and sends its parts, the NCCL runtime packs, sends and
// unpacks them with the copy kernel, and a MultiFetch kernel reads them
// through unified addressing (getMultiFetchParts, with CopyParts.h's
// element mapping). Header-only
// and free of MLIR and of MPI, so that each runtime and the unit tests
// (against `Distribution.h`) include the same definition.
//
// Every rank r holds the box held[r] of a tensor and wants the box
// wanted[r]. The distinct held boxes are the regions; ranks holding the
// same region are its owners. A rank takes what it owns from itself, and
// every other part of its box from one owner of the region: owner number
// (receiver mod owners), which every rank can compute without talking.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_FETCHPLAN_H
#define TOFU_RUNTIME_FETCHPLAN_H

#include "tofu/Runtime/CopyParts.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tofu::fetch {

/// A box of tensor coordinates, inclusive on both ends; empty when some
/// hi < lo.
struct Box {
  std::vector<int64_t> lo, hi;

  bool empty() const {
    for (size_t d = 0; d < lo.size(); ++d)
      if (hi[d] < lo[d])
        return true;
    return false;
  }
  Box intersect(const Box &o) const {
    Box b{lo, hi};
    for (size_t d = 0; d < lo.size(); ++d) {
      b.lo[d] = std::max(lo[d], o.lo[d]);
      b.hi[d] = std::min(hi[d], o.hi[d]);
    }
    return b;
  }
  std::vector<int64_t> sizes() const {
    std::vector<int64_t> s(lo.size());
    for (size_t d = 0; d < lo.size(); ++d)
      s[d] = std::max<int64_t>(hi[d] - lo[d] + 1, 0);
    return s;
  }
  int64_t volume() const {
    int64_t n = 1;
    for (int64_t s : sizes())
      n *= s;
    return n;
  }
  bool operator==(const Box &o) const { return lo == o.lo && hi == o.hi; }
};

/// The boxes of `ranks` ranks whose tiles have `sizes` and start at
/// `offsets` (rank-major: rank r's offsets are offsets[r * rank .. ]), as a
/// fetch's operands give them.
inline std::vector<Box> getBoxes(const std::vector<int64_t> &offsets,
                                 const std::vector<int64_t> &sizes,
                                 int ranks) {
  size_t rank = sizes.size();
  std::vector<Box> boxes(ranks);
  for (int r = 0; r < ranks; ++r)
    for (size_t d = 0; d < rank; ++d) {
      boxes[r].lo.push_back(offsets[r * rank + d]);
      boxes[r].hi.push_back(offsets[r * rank + d] + sizes[d] - 1);
    }
  return boxes;
}

/// One transfer: `box` (tensor coordinates) goes from `source`'s tile to
/// `receiver`'s. A part with source == receiver is a local copy.
struct Part {
  int source = 0, receiver = 0;
  Box box;
};

/// The parts of a fetch, in receiver order and, for each receiver, in the
/// order of the regions (first held by the lowest rank). Both the sender
/// and the receiver of a part list it at the same position among the parts
/// between them, so that a packed message needs no header.
inline std::vector<Part> planFetch(const std::vector<Box> &held,
                                   const std::vector<Box> &wanted) {
  int ranks = held.size();
  std::vector<Box> regions;
  std::vector<std::vector<int>> owners;
  for (int r = 0; r < ranks; ++r) {
    auto it = std::find(regions.begin(), regions.end(), held[r]);
    if (it == regions.end()) {
      regions.push_back(held[r]);
      owners.push_back({r});
    } else {
      owners[it - regions.begin()].push_back(r);
    }
  }
  std::vector<Part> parts;
  for (int w = 0; w < ranks; ++w)
    for (size_t j = 0; j < regions.size(); ++j) {
      Box box = wanted[w].intersect(regions[j]);
      if (box.empty())
        continue;
      const std::vector<int> &o = owners[j];
      bool owns = std::find(o.begin(), o.end(), w) != o.end();
      parts.push_back({owns ? w : o[w % o.size()], w, box});
    }
  return parts;
}

/// Where one element of a receiver's tile comes from: the source rank and
/// the row-major offset in the source's tile.
struct ElementSource {
  int source = 0;
  int64_t offset = 0;
};

/// For every element of `receiver`'s tile, in row-major order, its source:
/// what a MultiFetch kernel reads, one thread per element, through unified
/// addressing. Elements no part covers keep source -1.
inline std::vector<ElementSource>
mapElements(const std::vector<Part> &parts, const std::vector<Box> &held,
            const std::vector<Box> &wanted, int receiver) {
  const Box &mine = wanted[receiver];
  std::vector<int64_t> size = mine.sizes();
  size_t rank = size.size();
  std::vector<ElementSource> map(mine.volume(), ElementSource{-1, 0});
  for (const Part &p : parts) {
    if (p.receiver != receiver)
      continue;
    const Box &from = held[p.source];
    std::vector<int64_t> fromSize = from.sizes();
    std::vector<int64_t> extent = p.box.sizes();
    std::vector<int64_t> at(rank, 0);
    for (int64_t n = p.box.volume(); n > 0; --n) {
      int64_t dst = 0, src = 0;
      for (size_t d = 0; d < rank; ++d) {
        int64_t x = p.box.lo[d] + at[d];
        dst = dst * size[d] + (x - mine.lo[d]);
        src = src * fromSize[d] + (x - from.lo[d]);
      }
      map[dst] = {p.source, src};
      for (size_t d = rank; d-- > 0;) {
        if (++at[d] < extent[d])
          break;
        at[d] = 0;
      }
    }
  }
  return map;
}

/// A rank's tile in memory: the address of its first element and its
/// strides, in elements.
struct Tile {
  const char *data = nullptr;
  std::vector<int64_t> strides;
};

/// The offset, in elements, of the tensor coordinates `at` in `tile`,
/// which holds `box`.
inline int64_t getTileOffset(const Tile &tile, const Box &box,
                             const std::vector<int64_t> &at) {
  int64_t offset = 0;
  for (size_t d = 0; d < at.size(); ++d)
    offset += (at[d] - box.lo[d]) * tile.strides[d];
  return offset;
}

/// The copy parts of `receiver`'s MultiFetch (CopyParts.h): one per part
/// of the plan that it receives, read from the source's tile in `tiles`
/// (its own, or a peer's through unified addressing) and written to
/// `target`, the receiver's wanted tile. False when a box has more
/// dimensions than the kernel takes.
inline bool getMultiFetchParts(const std::vector<Part> &parts,
                               const std::vector<Box> &held,
                               const std::vector<Box> &wanted, int receiver,
                               const std::vector<Tile> &tiles,
                               const Tile &target, int64_t elementBytes,
                               std::vector<copy::Part> &launch) {
  launch.clear();
  for (const Part &p : parts) {
    if (p.receiver != receiver)
      continue;
    const Tile &from = tiles[p.source];
    const char *source =
        from.data +
        getTileOffset(from, held[p.source], p.box.lo) * elementBytes;
    char *to = const_cast<char *>(target.data) +
               getTileOffset(target, wanted[receiver], p.box.lo) * elementBytes;
    copy::Part part;
    if (!copy::makePart(source, from.strides, to, target.strides, p.box.sizes(),
                        part))
      return false;
    launch.push_back(part);
  }
  copy::numberParts(launch);
  return true;
}

} // namespace tofu::fetch

#endif // TOFU_RUNTIME_FETCHPLAN_H
