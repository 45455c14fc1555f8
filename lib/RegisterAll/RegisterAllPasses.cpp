//===- RegisterAllPasses.cpp - Register every Tofu pass -------------------===//
//
// Implements the public entry point that registers the Tofu passes and pass
// pipelines with MLIR's global pass registry.
//
//===----------------------------------------------------------------------===//

#include "tofu/InitAllPasses.h"

#include "tofu/Conversion/Passes.h"
#include "tofu/Dialect/TDL/Transforms/Passes.h"
#include "tofu/Dialect/Tofu/Transforms/Passes.h"
#include "tofu/Transforms/Passes.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <unistd.h>

void tofu::registerAllPasses() {
  tdl::registerTDLPasses();
  registerTofuPasses();
  registerTofuTrainPipeline();
  registerTofuPartitionPasses();
  registerTofuConversionPasses();
  registerTofuCPUPipeline();
  registerTofuGPUPipeline();
}

/// The option names of `{a=1 b={x y} c}` (or without the braces): what
/// precedes each `=` (or a bare word) at the outer level.
static std::vector<std::string> parseOptionKeys(llvm::StringRef text) {
  text = text.trim();
  if (text.starts_with("{") && text.ends_with("}"))
    text = text.drop_front().drop_back();
  std::vector<std::string> keys;
  int depth = 0;
  bool inKey = true;
  std::string key;
  char quote = 0;
  auto flush = [&] {
    if (!key.empty())
      keys.push_back(key);
    key.clear();
  };
  for (char c : text) {
    if (quote) {
      quote = c == quote ? 0 : quote;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      continue;
    }
    if (c == '{') {
      ++depth;
      continue;
    }
    if (c == '}') {
      --depth;
      continue;
    }
    if (depth > 0)
      continue;
    if (c == ' ' || c == '\t') {
      if (inKey)
        flush();
      inKey = true;
      continue;
    }
    if (c == '=' && inKey) {
      flush();
      inKey = false;
      continue;
    }
    if (inKey)
      key.push_back(c);
  }
  if (inKey)
    flush();
  return keys;
}

std::optional<std::vector<std::string>>
tofu::getPassOptionNames(llvm::StringRef argument) {
  // The registry prints an entry's options (list options and a pipeline's
  // own options included) only as help text on stdout: capture it.
  const mlir::PassRegistryEntry *entry = mlir::PassInfo::lookup(argument);
  if (!entry)
    entry = mlir::PassPipelineInfo::lookup(argument);
  if (!entry)
    return std::nullopt;
  std::FILE *capture = std::tmpfile();
  if (!capture)
    return std::nullopt;
  llvm::outs().flush();
  std::fflush(stdout);
  int saved = ::dup(1);
  ::dup2(::fileno(capture), 1);
  // descIndent must exceed the widest option, or the padding wraps around.
  entry->printHelpStr(/*indent=*/0, /*descIndent=*/512);
  llvm::outs().flush();
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  std::string help;
  std::rewind(capture);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), capture)) > 0;)
    help.append(buffer, n);
  std::fclose(capture);
  // The first line is the entry; each option line starts with "--NAME".
  std::vector<std::string> names;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(help).split(lines, '\n');
  for (llvm::StringRef line : llvm::drop_begin(lines)) {
    line = line.ltrim();
    if (!line.consume_front("--"))
      continue;
    names.push_back(
        line.take_until([](char c) { return c == '=' || c == ' '; }).str());
  }
  return names;
}

bool tofu::checkPassOptionSpelling(int argc, char **argv,
                                   llvm::StringRef tool) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--")
      break;
    if (!arg.starts_with("-"))
      continue;
    arg = arg.ltrim('-');
    auto [name, options] = arg.split('=');
    if (options.empty() || !(name.starts_with("tofu-") ||
                             name.starts_with("tdl-") ||
                             name.starts_with("convert-tofu-")))
      continue;
    std::optional<std::vector<std::string>> valid = getPassOptionNames(name);
    if (!valid)
      continue;
    for (const std::string &key : parseOptionKeys(options)) {
      if (llvm::is_contained(*valid, key))
        continue;
      llvm::errs() << tool << ": --" << name << " has no option '" << key
                   << "'";
      const std::string *nearest = nullptr;
      unsigned best = ~0u;
      for (const std::string &v : *valid) {
        unsigned d = llvm::StringRef(key).edit_distance(v);
        if (d < best)
          best = d, nearest = &v;
      }
      if (nearest && best <= std::max<size_t>(2, key.size() / 3))
        llvm::errs() << "; did you mean '" << *nearest << "'?";
      llvm::errs() << " (its options: ";
      llvm::interleaveComma(*valid, llvm::errs());
      llvm::errs() << ")\n";
      return false;
    }
  }
  return true;
}
