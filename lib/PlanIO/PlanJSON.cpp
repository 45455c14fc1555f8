//===- PlanJSON.cpp - Plans as JSON ---------------------------------------===//

#include "tofu/PlanIO/PlanIO.h"
#include "tofu/Partition/PlanImport.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace tofu;
namespace json = llvm::json;

std::optional<Tiling> tofu::parseTiling(const std::string &text) {
  if (text == "rep")
    return Tiling::replicate();
  if (text == "partial")
    return Tiling::partial();
  unsigned dim;
  char close;
  if (std::sscanf(text.c_str(), "cut(%u%c", &dim, &close) == 2 &&
      close == ')' && text == "cut(" + std::to_string(dim) + ")")
    return Tiling::cut(dim);
  return std::nullopt;
}

static json::Array shapeJSON(const Shape &s) {
  json::Array a;
  for (int64_t d : s)
    a.push_back(d);
  return a;
}

std::string tofu::writePlanJSON(const Graph &graph, const Plan &plan) {
  json::Object root;
  root["format"] = "tofu-plan";
  root["version"] = 1;
  root["algorithm"] = stringifyAlgorithm(plan.algorithm);
  root["replication"] = plan.replication;
  root["devices"] = plan.topology.str();
  json::Array levels, bandwidth;
  for (unsigned l : plan.topology.levels)
    levels.push_back(l);
  for (double b : plan.topology.bandwidth)
    bandwidth.push_back(b);
  root["levels"] = std::move(levels);
  root["bandwidth_gbps"] = std::move(bandwidth);

  json::Array steps;
  for (const PlanStep &s : plan.steps)
    steps.push_back(json::Object{{"k", s.k},
                                 {"level", s.level},
                                 {"groups", s.groups},
                                 {"bytes", s.bytes},
                                 {"exact", s.exact},
                                 {"coarsened", s.coarsened},
                                 {"shared_reads", s.sharedReads},
                                 {"degenerate", s.degenerate}});
  root["steps"] = std::move(steps);
  root["total_bytes"] = plan.totalBytes;
  if (plan.programBytes >= 0)
    root["program_bytes"] = plan.programBytes;

  json::Array tensors;
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    const TensorNode &tn = graph.tensors[t];
    json::Array tilings, local;
    for (const PlanStep &s : plan.steps) {
      tilings.push_back(s.tilings[t].str());
      local.push_back(shapeJSON(s.before.tensorShapes[t]));
    }
    tensors.push_back(json::Object{{"id", (int64_t)t},
                                   {"name", tn.name},
                                   {"role", stringifyTensorRole(tn.role)},
                                   {"shape", shapeJSON(tn.shape)},
                                   {"element_bytes", tn.elementBytes},
                                   {"tilings", std::move(tilings)},
                                   {"local_shapes", std::move(local)}});
  }
  root["tensors"] = std::move(tensors);

  json::Array ops;
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const OpNode &op = graph.ops[o];
    json::Array inputs, outputs, opSteps;
    for (int t : op.inputs)
      inputs.push_back(t);
    for (int t : op.outputs)
      outputs.push_back(t);
    for (const PlanStep &s : plan.steps) {
      const OpStep &os = s.ops[o];
      json::Array needs, produces, inShapes, outShapes, inBytes, outBytes,
          regions;
      for (const std::string &n : os.needs)
        needs.push_back(n);
      for (const std::vector<Box> &boxes : os.regions) {
        if (boxes.empty()) {
          regions.push_back(nullptr);
          continue;
        }
        json::Array perWorker;
        for (const Box &b : boxes)
          perWorker.push_back(json::Array{shapeJSON(b.lo), shapeJSON(b.hi)});
        regions.push_back(std::move(perWorker));
      }
      for (const Tiling &t : os.produces)
        produces.push_back(t.str());
      for (const Shape &sh : s.before.opShapes[o].inputs)
        inShapes.push_back(shapeJSON(sh));
      for (const Shape &sh : s.before.opShapes[o].outputs)
        outShapes.push_back(shapeJSON(sh));
      for (double b : os.inputBytes)
        inBytes.push_back(b);
      for (double b : os.outputBytes)
        outBytes.push_back(b);
      opSteps.push_back(json::Object{{"strategy", os.strategy},
                                     {"needs", std::move(needs)},
                                     {"regions", std::move(regions)},
                                     {"produces", std::move(produces)},
                                     {"input_shapes", std::move(inShapes)},
                                     {"output_shapes", std::move(outShapes)},
                                     {"input_bytes", std::move(inBytes)},
                                     {"output_bytes", std::move(outBytes)}});
    }
    ops.push_back(json::Object{{"id", (int64_t)o},
                               {"name", op.name},
                               {"inputs", std::move(inputs)},
                               {"outputs", std::move(outputs)},
                               {"steps", std::move(opSteps)}});
  }
  root["ops"] = std::move(ops);
  json::Array remarks;
  for (const std::string &r : plan.remarks)
    remarks.push_back(r);
  root["remarks"] = std::move(remarks);
  json::Array warnings;
  for (const std::string &w : plan.warnings)
    warnings.push_back(w);
  root["warnings"] = std::move(warnings);

  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:1}", json::Value(std::move(root))) << "\n";
  return text;
}

std::optional<Plan> tofu::readPlanJSON(const Graph &graph,
                                       const std::string &text,
                                       std::string &error) {
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    error = "malformed JSON: " + llvm::toString(parsed.takeError());
    return std::nullopt;
  }
  const json::Object *root = parsed->getAsObject();
  if (!root || root->getString("format") != "tofu-plan") {
    error = "not a tofu plan (expected \"format\": \"tofu-plan\")";
    return std::nullopt;
  }
  if (root->getInteger("version") != 1) {
    error = "unsupported plan version (expected 1)";
    return std::nullopt;
  }
  SearchOptions options;
  auto algorithm = root->getString("algorithm");
  auto parsedAlgorithm =
      algorithm ? parseAlgorithm(algorithm->str()) : std::nullopt;
  if (!parsedAlgorithm) {
    error = "unknown or missing \"algorithm\"";
    return std::nullopt;
  }
  options.algorithm = *parsedAlgorithm;
  options.replication = root->getBoolean("replication").value_or(false);
  std::string bandwidths;
  if (const json::Array *bw = root->getArray("bandwidth_gbps"))
    for (const json::Value &v : *bw) {
      if (!bandwidths.empty())
        bandwidths += ",";
      bandwidths += std::to_string(v.getAsNumber().value_or(-1));
    }
  auto devices = root->getString("devices");
  std::optional<Topology> topology =
      Topology::parse(devices ? devices->str() : "", bandwidths, error);
  if (!topology)
    return std::nullopt;

  const json::Array *tensors = root->getArray("tensors");
  const json::Array *ops = root->getArray("ops");
  if (!tensors || !ops) {
    error = "the plan has no \"tensors\" or \"ops\"";
    return std::nullopt;
  }
  if (tensors->size() != graph.tensors.size() ||
      ops->size() != graph.ops.size()) {
    error = "the plan is for a different program: it has " +
            std::to_string(tensors->size()) + " tensors and " +
            std::to_string(ops->size()) + " operators, the program " +
            std::to_string(graph.tensors.size()) + " and " +
            std::to_string(graph.ops.size());
    return std::nullopt;
  }
  size_t numSteps = SIZE_MAX;
  std::vector<std::vector<Tiling>> tilings;
  std::vector<std::vector<std::string>> strategies;
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    const json::Object *obj = (*tensors)[t].getAsObject();
    const json::Array *tl = obj ? obj->getArray("tilings") : nullptr;
    const json::Array *shape = obj ? obj->getArray("shape") : nullptr;
    std::string where = "tensor " + std::to_string(t);
    if (!tl || !shape) {
      error = where + " has no \"tilings\" or \"shape\"";
      return std::nullopt;
    }
    Shape s;
    for (const json::Value &d : *shape)
      s.push_back(d.getAsInteger().value_or(-1));
    if (s != graph.tensors[t].shape) {
      error = where + " (" + graph.tensors[t].name +
              "): the plan's shape differs from the program's";
      return std::nullopt;
    }
    if (numSteps == SIZE_MAX) {
      numSteps = tl->size();
      tilings.assign(numSteps, std::vector<Tiling>(graph.tensors.size()));
      strategies.assign(numSteps, std::vector<std::string>(graph.ops.size()));
    }
    if (tl->size() != numSteps) {
      error = where + " has " + std::to_string(tl->size()) +
              " tilings, expected " + std::to_string(numSteps);
      return std::nullopt;
    }
    for (size_t i = 0; i < numSteps; ++i) {
      auto str = (*tl)[i].getAsString();
      auto tiling = str ? parseTiling(str->str()) : std::nullopt;
      if (!tiling) {
        error = where + ": bad tiling at step " + std::to_string(i) +
                " (expected \"cut(d)\" or \"rep\")";
        return std::nullopt;
      }
      tilings[i][t] = *tiling;
    }
  }
  if (numSteps == SIZE_MAX)
    numSteps = topology->getSteps().size();
  tilings.resize(numSteps, std::vector<Tiling>(graph.tensors.size()));
  strategies.resize(numSteps, std::vector<std::string>(graph.ops.size()));
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const json::Object *obj = (*ops)[o].getAsObject();
    const json::Array *st = obj ? obj->getArray("steps") : nullptr;
    std::string where = "operator " + std::to_string(o);
    if (!st || st->size() != numSteps) {
      error = where + " needs \"steps\" with " + std::to_string(numSteps) +
              " entries";
      return std::nullopt;
    }
    auto name = obj->getString("name");
    if (!name || name->str() != graph.ops[o].name) {
      error = where + ": the plan names a different operator than " +
              graph.ops[o].name;
      return std::nullopt;
    }
    for (size_t i = 0; i < numSteps; ++i) {
      const json::Object *step = (*st)[i].getAsObject();
      auto strategy = step ? step->getString("strategy") : std::nullopt;
      if (!strategy) {
        error = where + ": step " + std::to_string(i) + " has no \"strategy\"";
        return std::nullopt;
      }
      strategies[i][o] = strategy->str();
    }
  }
  std::optional<Plan> plan =
      evaluatePlan(graph, *topology, options, tilings, strategies, error);
  if (plan && !evaluateProgramBytes(graph, *plan, error))
    return std::nullopt;
  return plan;
}
