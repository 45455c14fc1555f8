//===- plan-json-seeds.cpp - Seeds for the plan JSON fuzzer ---------------===//
//
// Writes the searched plans of the plan JSON fuzzer's graph, for several
// device counts, algorithms and options, into the directory given as the
// only argument: plans that import, from which the fuzzer mutates.
//
//===----------------------------------------------------------------------===//

#include "FuzzTargets.h"

#include "tofu/Partition/Topology.h"
#include "tofu/PlanIO/PlanIO.h"

#include <fstream>

using namespace tofu;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: plan-json-seeds <directory>\n");
    return 2;
  }
  Graph graph = fuzz::makeFuzzGraph();
  unsigned count = 0;
  for (const char *devices : {"2", "4", "2x2", "8"}) {
    for (const char *algorithm : {"tofu", "data-parallel", "allrow-greedy",
                                  "spartan", "equalchop", "icml18"}) {
      for (bool replication : {false, true}) {
        std::string error;
        auto topology = Topology::parse(devices, "", error);
        auto parsedAlgorithm = parseAlgorithm(algorithm);
        if (!topology || !parsedAlgorithm) {
          std::fprintf(stderr, "%s\n", error.c_str());
          return 1;
        }
        SearchOptions options;
        options.algorithm = *parsedAlgorithm;
        options.replication = replication;
        auto plan = searchPlan(graph, *topology, options, error);
        if (!plan) {
          std::fprintf(stderr, "search failed: %s\n", error.c_str());
          return 1;
        }
        std::string path = std::string(argv[1]) + "/plan-" + devices + "-" +
                           algorithm + (replication ? "-rep" : "") + ".json";
        std::ofstream(path) << writePlanJSON(graph, *plan);
        ++count;
      }
    }
  }
  std::printf("wrote %u plans\n", count);
  return 0;
}
