//===- TrainingIO.cpp - Weights, data and checkpoints of a training run ---===//
//
// The tofu_io_* functions of include/tofu/Runtime/TofuRuntime.h, which
// tofu-train-driver calls when it is given files: every rank memory-maps
// the safetensors files and copies only its own tile of each weight and of
// each batch; checkpoints are written by every rank at its tiles' offsets
// with MPI-IO into a temporary file that rank 0 renames over the previous
// checkpoint once all ranks have closed it.
//
// Every rank reads the same headers and so finds the same problems: rank 0
// prints them all, and every rank leaves with status 1 without a
// collective left waiting.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/SafeTensors.h"
#include "tofu/Runtime/TofuRuntime.h"

#include "RuntimeSupport.h"
#include "Workers.h"

#include <mpi.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace st = tofu::safetensors;
using namespace tofu::runtime;

namespace {

/// A file opened for reading.
struct InputFile {
  std::string path;
  std::unique_ptr<st::MappedFile> mapping;
  st::Header header;
};

/// A tile waiting to be written by tofu_io_save_end.
struct PendingTile {
  std::string name;
  int64_t type = TOFU_F32;
  std::vector<int64_t> shape, lo;
  View view;
};

int worldRank() { return int(tofu_rank()); }

/// Fault injection for the tests of resuming (docs/training.md, "Faults"):
/// TOFU_FAULT=kill:R:S stops rank R with SIGKILL after step S - 1 (when S
/// steps are done), and kill-in-save:R:S in the middle of writing the
/// checkpoint of step S, after its first bytes.
struct Fault {
  bool inSave = false;
  int rank = -1;
  int64_t step = -1;
};

Fault readFault() {
  Fault fault;
  const char *text = std::getenv("TOFU_FAULT");
  if (!text || !*text)
    return fault;
  int rank = -1;
  long long step = -1;
  char kind[16] = "";
  if (std::sscanf(text, "%15[a-z-]:%d:%lld", kind, &rank, &step) != 3 ||
      (std::strcmp(kind, "kill") && std::strcmp(kind, "kill-in-save")))
    fatal("TOFU_FAULT must be kill:RANK:STEP or kill-in-save:RANK:STEP");
  fault.inSave = std::strcmp(kind, "kill-in-save") == 0;
  fault.rank = rank;
  fault.step = step;
  return fault;
}

void injectFault(const Fault &fault, bool inSave, int64_t stepsDone) {
  if (fault.rank >= 0 && fault.inSave == inSave && fault.step == stepsDone &&
      fault.rank == worldRank()) {
    std::fflush(stdout);
    std::raise(SIGKILL);
  }
}

struct IOState {
  std::unique_ptr<InputFile> init, data, resume;
  std::string savePath;
  int64_t saveEvery = 0, steps = 0, startStep = 0;
  /// The names tofu_io_load asked for, to find unexpected tensors.
  std::set<std::string> loaded;
  /// The first data tensor read, and its samples: every data tensor must
  /// have as many (sample i of one goes with sample i of the others).
  std::string firstData;
  int64_t firstDataSamples = 0;
  std::vector<std::string> errors;
  std::vector<PendingTile> pending;
  Fault fault;
};

/// Each rank's own: an in-process worker (Workers.h) reads its tiles from
/// its own mappings.
IOState &io() {
  static thread_local IOState s;
  return s;
}

/// Leaves the job: every rank calls it at the same point, rank 0 having
/// printed the reasons.
[[noreturn]] void leave(const std::vector<std::string> &reasons) {
  auto explain = [&] {
    for (const std::string &reason : reasons)
      std::fprintf(stderr, "tofu runtime: %s\n", reason.c_str());
    std::fflush(stderr);
  };
  if (workers::active())
    workers::leave(1, explain);
  if (worldRank() == 0)
    explain();
  MPI_Finalize();
  std::exit(1);
}
[[noreturn]] void leave(const std::string &reason) {
  leave(std::vector<std::string>{reason});
}

std::string getString(const TofuUnrankedMemRef *m) {
  View v = getView(m, 1);
  std::string text;
  int64_t stride = v.strides.empty() ? 1 : v.strides[0];
  for (int64_t i = 0; i < v.volume(); ++i)
    text.push_back(v.data[i * stride]);
  return text;
}

std::unique_ptr<InputFile> openInput(const std::string &path,
                                     const char *what) {
  if (path.empty())
    return nullptr;
  auto file = std::make_unique<InputFile>();
  file->path = path;
  std::string error;
  file->mapping = st::MappedFile::open(path, error);
  if (!file->mapping)
    leave(std::string(what) + ": " + error);
  if (!st::parseHeader(file->mapping->data(), file->mapping->size(),
                       file->header, error))
    leave(std::string(what) + " '" + path + "': " + error);
  return file;
}

st::DType getDType(int64_t type) {
  switch (type) {
  case TOFU_F32:
    return st::DType::F32;
  case TOFU_F64:
    return st::DType::F64;
  case TOFU_I32:
    return st::DType::I32;
  default:
    return st::DType::I64;
  }
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// Loads argument `name`'s tile from the checkpoint or the initial weights.
void load(TofuUnrankedMemRef *nameRef, TofuUnrankedMemRef *tile,
          TofuUnrankedMemRef *offsets, TofuUnrankedMemRef *globalShape,
          int64_t kind, int64_t type) {
  IOState &s = io();
  InputFile *file = s.resume ? s.resume.get() : s.init.get();
  if (!file)
    return;
  std::string name = getString(nameRef);
  s.loaded.insert(name);
  const st::TensorInfo *tensor = file->header.find(name);
  std::vector<int64_t> shape = getInts(globalShape);
  std::string expected = std::string(st::getDTypeName(getDType(type))) + " " +
                         formatShape(shape);
  if (!tensor) {
    // Initial weights may leave the optimizer state out (it starts at 0).
    if (kind == 0 || s.resume)
      s.errors.push_back("'" + file->path + "' has no tensor '" + name +
                         "' (" + expected + ")");
    return;
  }
  if (tensor->dtype != getDType(type) || tensor->shape != shape) {
    s.errors.push_back("tensor '" + name + "' of '" + file->path + "' is " +
                       st::getDTypeName(tensor->dtype) + " " +
                       formatShape(tensor->shape) + ", the step expects " +
                       expected);
    return;
  }
  View v = getView(tile, bytesOf(type));
  std::string error;
  if (!st::readTile(file->mapping->data(), file->mapping->size(),
                    file->header, *tensor, getInts(offsets), v.sizes, v.data,
                    v.strides, error))
    s.errors.push_back("'" + file->path + "': " + error);
}

/// Fills the tile of data argument `name` with the samples of step `step`.
void batch(TofuUnrankedMemRef *nameRef, TofuUnrankedMemRef *tile,
           TofuUnrankedMemRef *offsets, TofuUnrankedMemRef *globalShape,
           int64_t step, int64_t type) {
  IOState &s = io();
  if (!s.data)
    fatal("io_batch: no data file is open");
  InputFile &file = *s.data;
  std::string name = getString(nameRef);
  std::vector<int64_t> shape = getInts(globalShape), lo = getInts(offsets);
  const st::TensorInfo *tensor = file.header.find(name);
  std::vector<int64_t> rest(shape.begin() + (shape.empty() ? 0 : 1),
                           shape.end());
  std::string expected = std::string(st::getDTypeName(getDType(type))) +
                         " [samples" +
                         (rest.empty() ? "]" : ", " + formatShape(rest).substr(1));
  if (shape.empty())
    leave("data argument '" + name +
          "' is 0-d: it has no batch dimension to take samples along");
  if (!tensor)
    leave("'" + file.path + "' has no tensor '" + name + "' (" + expected +
          ")");
  bool sameRest =
      tensor->shape.size() == shape.size() &&
      std::equal(shape.begin() + 1, shape.end(), tensor->shape.begin() + 1);
  if (tensor->dtype != getDType(type) || !sameRest || tensor->shape[0] < 1)
    leave("tensor '" + name + "' of '" + file.path + "' is " +
          st::getDTypeName(tensor->dtype) + " " + formatShape(tensor->shape) +
          ", the step expects " + expected);
  if (s.firstData.empty()) {
    s.firstData = name;
    s.firstDataSamples = tensor->shape[0];
  } else if (tensor->shape[0] != s.firstDataSamples) {
    leave("the data tensors of '" + file.path +
          "' have different numbers of samples: '" + s.firstData + "' has " +
          std::to_string(s.firstDataSamples) + ", '" + name + "' has " +
          std::to_string(tensor->shape[0]) +
          "; sample i of each goes with sample i of the others");
  }
  // Row i of this rank's tile is sample (step * batch + lo[0] + i) mod n.
  View v = getView(tile, bytesOf(type));
  int64_t samples = tensor->shape[0], rows = v.sizes[0];
  std::vector<int64_t> rowLo = lo, rowSizes = v.sizes;
  rowSizes[0] = 1;
  std::string error;
  for (int64_t i = 0; i < rows; ++i) {
    rowLo[0] = (step % samples * (shape[0] % samples) + lo[0] + i) % samples;
    if (!st::readTile(file.mapping->data(), file.mapping->size(), file.header,
                      *tensor, rowLo, rowSizes,
                      v.data + i * v.strides[0] * v.elementBytes,
                      v.strides, error))
      leave("'" + file.path + "': " + error);
  }
}

void save(TofuUnrankedMemRef *nameRef, TofuUnrankedMemRef *tile,
          TofuUnrankedMemRef *offsets, TofuUnrankedMemRef *globalShape,
          int64_t type) {
  IOState &s = io();
  if (s.savePath.empty())
    return;
  PendingTile t;
  t.name = getString(nameRef);
  t.type = type;
  t.shape = getInts(globalShape);
  t.lo = getInts(offsets);
  t.view = getView(tile, bytesOf(type));
  s.pending.push_back(std::move(t));
}

/// Fails every rank with the message of an MPI-IO error.
void checkIO(int status, const std::string &what) {
  if (status == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  leave(what + ": " + std::string(text, length));
}

/// Writes the pending tiles as the checkpoint after `stepsDone` steps.
void writeCheckpoint(int64_t stepsDone) {
  IOState &s = io();
  // A checkpoint is one file that the ranks write together through MPI-IO.
  if (workers::active())
    leave("in-process workers do not write checkpoints: run the ranks under "
          "mpiexec to use --save");
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<st::TensorSpec> specs;
  for (const PendingTile &t : s.pending)
    specs.push_back({t.name, getDType(t.type), t.shape});
  st::Layout layout;
  std::string error;
  if (!st::layoutHeader(specs, {{"step", std::to_string(stepsDone)}}, layout,
                        error))
    leave("checkpoint '" + s.savePath + "': " + error);
  // Replicated tiles are written once, by the lowest rank that holds them:
  // every rank learns every rank's boxes.
  std::vector<int64_t> mine;
  for (const PendingTile &t : s.pending) {
    mine.insert(mine.end(), t.lo.begin(), t.lo.end());
    mine.insert(mine.end(), t.view.sizes.begin(), t.view.sizes.end());
  }
  std::vector<int64_t> all(mine.size() * size_t(ranks));
  TOFU_MPI_CHECK(MPI_Allgather(mine.data(), int(mine.size()), MPI_INT64_T,
                               all.data(), int(mine.size()), MPI_INT64_T,
                               MPI_COMM_WORLD));
  auto ownsFirst = [&](size_t at, size_t length) {
    for (int r = 0; r < rank; ++r)
      if (std::equal(all.begin() + r * mine.size() + at,
                     all.begin() + r * mine.size() + at + length,
                     mine.begin() + at))
        return false;
    return true;
  };

  std::string temporary = s.savePath + ".tmp";
  if (rank == 0)
    MPI_File_delete(temporary.c_str(), MPI_INFO_NULL);
  TOFU_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_File fh;
  checkIO(MPI_File_open(MPI_COMM_WORLD, temporary.c_str(),
                        MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
          "cannot create checkpoint '" + temporary + "'");
  checkIO(MPI_File_set_size(fh, MPI_Offset(layout.fileSize)),
          "cannot size checkpoint '" + temporary + "'");
  auto writeAt = [&](const void *bytes, uint64_t count, uint64_t offset,
                     std::string &why) {
    while (count > 0) {
      int chunk = int(std::min<uint64_t>(count, 1u << 30));
      MPI_Status status;
      int code = MPI_File_write_at(fh, MPI_Offset(offset), bytes, chunk,
                                   MPI_BYTE, &status);
      if (code != MPI_SUCCESS) {
        why = "MPI_File_write_at failed";
        return false;
      }
      bytes = static_cast<const char *>(bytes) + chunk;
      count -= uint64_t(chunk);
      offset += uint64_t(chunk);
    }
    return true;
  };
  bool ok = true;
  if (rank == 0)
    ok = writeAt(layout.prefix.data(), layout.prefix.size(), 0, error);
  injectFault(s.fault, /*inSave=*/true, stepsDone);
  size_t at = 0;
  for (const PendingTile &t : s.pending) {
    size_t length = 2 * t.lo.size();
    if (ok && ownsFirst(at, length)) {
      size_t index = 0;
      while (layout.header.tensors[index].name != t.name)
        ++index;
      ok = st::writeTile(writeAt, layout, index, t.lo, t.view.sizes,
                         t.view.data, t.view.strides, error);
    }
    at += length;
  }
  // Every rank learns whether all wrote before the file is renamed.
  int good = ok ? 1 : 0, allGood = 0;
  TOFU_MPI_CHECK(
      MPI_Allreduce(&good, &allGood, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  if (allGood)
    checkIO(MPI_File_sync(fh), "cannot flush checkpoint '" + temporary + "'");
  checkIO(MPI_File_close(&fh), "cannot close checkpoint '" + temporary + "'");
  if (!allGood)
    leave("checkpoint '" + temporary + "': " +
          (ok ? std::string("another rank failed to write") : error));
  int renamed = 1;
  if (rank == 0)
    renamed = std::rename(temporary.c_str(), s.savePath.c_str()) == 0;
  TOFU_MPI_CHECK(MPI_Bcast(&renamed, 1, MPI_INT, 0, MPI_COMM_WORLD));
  if (!renamed)
    leave("cannot rename '" + temporary + "' to '" + s.savePath + "'");
}

} // namespace

extern "C" {

void _mlir_ciface_tofu_io_open(TofuUnrankedMemRef *init,
                               TofuUnrankedMemRef *data,
                               TofuUnrankedMemRef *resume,
                               TofuUnrankedMemRef *save, int64_t saveEvery,
                               int64_t steps) {
  IOState &s = io();
  s.init = openInput(getString(init), "initial weights");
  s.data = openInput(getString(data), "data");
  s.resume = openInput(getString(resume), "checkpoint");
  s.savePath = getString(save);
  s.saveEvery = saveEvery;
  s.steps = steps;
  s.fault = readFault();
  if (s.resume) {
    std::string step;
    for (const auto &[key, value] : s.resume->header.metadata)
      if (key == "step")
        step = value;
    char *end = nullptr;
    long long n = step.empty() ? -1 : std::strtoll(step.c_str(), &end, 10);
    if (n < 0 || (end && *end))
      leave("checkpoint '" + s.resume->path +
            "' has no step count (metadata 'step'): it was not written by "
            "--save");
    if (n > steps)
      leave("checkpoint '" + s.resume->path + "' is at step " +
            std::to_string(n) + ", past the " + std::to_string(steps) +
            " steps of this run");
    s.startStep = n;
  }
}

int64_t tofu_io_start(void) {
  IOState &s = io();
  InputFile *file = s.resume ? s.resume.get() : s.init.get();
  if (file)
    for (const st::TensorInfo &t : file->header.tensors)
      if (!s.loaded.count(t.name))
        s.errors.push_back("'" + file->path + "' has tensor '" + t.name +
                           "', which the step does not take (see "
                           "tofu-run --list-inputs)");
  if (!s.errors.empty())
    leave(s.errors);
  return s.startStep;
}

void tofu_io_save_end(int64_t stepsDone) {
  IOState &s = io();
  if (!s.savePath.empty() &&
      ((s.saveEvery > 0 && stepsDone % s.saveEvery == 0) ||
       stepsDone == s.steps))
    writeCheckpoint(stepsDone);
  s.pending.clear();
  injectFault(s.fault, /*inSave=*/false, stepsDone);
}

// One entry point per element type: a call's unranked buffer names it.
#define TOFU_IO_TYPED(suffix, code)                                            \
  void _mlir_ciface_tofu_io_load_##suffix(                                     \
      TofuUnrankedMemRef *name, TofuUnrankedMemRef *tile,                      \
      TofuUnrankedMemRef *offsets, TofuUnrankedMemRef *globalShape,            \
      int64_t kind) {                                                          \
    load(name, tile, offsets, globalShape, kind, code);                        \
  }                                                                            \
  void _mlir_ciface_tofu_io_batch_##suffix(                                    \
      TofuUnrankedMemRef *name, TofuUnrankedMemRef *tile,                      \
      TofuUnrankedMemRef *offsets, TofuUnrankedMemRef *globalShape,            \
      int64_t step) {                                                          \
    batch(name, tile, offsets, globalShape, step, code);                       \
  }                                                                            \
  void _mlir_ciface_tofu_io_save_##suffix(                                     \
      TofuUnrankedMemRef *name, TofuUnrankedMemRef *tile,                      \
      TofuUnrankedMemRef *offsets, TofuUnrankedMemRef *globalShape) {          \
    save(name, tile, offsets, globalShape, code);                              \
  }
TOFU_IO_TYPED(f32, TOFU_F32)
TOFU_IO_TYPED(f64, TOFU_F64)
TOFU_IO_TYPED(i32, TOFU_I32)
TOFU_IO_TYPED(i64, TOFU_I64)
#undef TOFU_IO_TYPED

} // extern "C"
