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

/// What `print` writes to stdout (the pass registry prints its help text
/// only there), or std::nullopt when it cannot be captured.
static std::optional<std::string>
captureStdout(llvm::function_ref<void()> print) {
  std::FILE *capture = std::tmpfile();
  if (!capture)
    return std::nullopt;
  llvm::outs().flush();
  std::fflush(stdout);
  int saved = ::dup(1);
  ::dup2(::fileno(capture), 1);
  print();
  llvm::outs().flush();
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  std::string text;
  std::rewind(capture);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), capture)) > 0;)
    text.append(buffer, n);
  std::fclose(capture);
  return text;
}

/// The registered pass or pipeline `argument`, or null.
static const mlir::PassRegistryEntry *lookupEntry(llvm::StringRef argument) {
  if (const mlir::PassRegistryEntry *entry = mlir::PassInfo::lookup(argument))
    return entry;
  return mlir::PassPipelineInfo::lookup(argument);
}

bool tofu::isTofuPassArgument(llvm::StringRef name) {
  return name.starts_with("tofu-") || name.starts_with("tdl-") ||
         name.starts_with("convert-tofu-");
}

void tofu::printTofuPassHelp() {
  std::optional<std::string> all =
      captureStdout([] { mlir::printRegisteredPasses(); });
  if (!all)
    return;
  // The registry lists passes only; the pipelines are these.
  std::vector<std::string> passes,
      pipelines{"tofu-train-pipeline", "tofu-cpu-pipeline",
                "tofu-gpu-pipeline"};
  llvm::erase_if(pipelines, [](const std::string &name) {
    return !mlir::PassPipelineInfo::lookup(name);
  });
  // Each entry's line starts with "  --NAME" (options are indented more).
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(*all).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (!line.consume_front("  --") || line.starts_with(" "))
      continue;
    llvm::StringRef name = line.take_until([](char c) { return c == ' '; });
    if (!isTofuPassArgument(name))
      continue;
    if (mlir::PassInfo::lookup(name))
      passes.push_back(name.str());
  }
  // The descriptions start in one column, right of the widest option: an
  // option wider than the column leaves `descIndent - indent - width`
  // negative, and LLVM's option printer pads by that difference as an
  // unsigned number (gigabytes of spaces).
  constexpr size_t kIndent = 2;
  size_t descIndent = 34;
  for (const std::vector<std::string> *names : {&pipelines, &passes})
    for (const std::string &name : *names)
      descIndent = std::max(descIndent,
                            kIndent + lookupEntry(name)->getOptionWidth() + 2);
  llvm::outs() << "Tofu-MLIR pipelines (docs/; `--NAME=\"option=value "
                  "...\"`):\n\n";
  for (const std::string &name : pipelines)
    lookupEntry(name)->printHelpStr(kIndent, descIndent);
  llvm::outs() << "\nTofu-MLIR passes, each followed by its defaults as a "
                  "pipeline element:\n\n";
  for (const std::string &name : passes) {
    const mlir::PassRegistryEntry *entry = lookupEntry(name);
    entry->printHelpStr(kIndent, descIndent);
    mlir::OpPassManager pm;
    if (succeeded(entry->addToPipeline(
            pm, "", [](const llvm::Twine &) { return mlir::failure(); }))) {
      std::string text;
      llvm::raw_string_ostream os(text);
      pm.printAsTextualPipeline(os);
      // "any(NAME{...})": the pass alone.
      llvm::StringRef element(text);
      if (element.consume_front("any(") && element.consume_back(")") &&
          element.contains('{'))
        llvm::outs() << "      default: " << element << "\n";
    }
  }
  llvm::outs() << "\n";
  llvm::outs().flush();
}

std::optional<std::vector<std::string>>
tofu::getPassOptionNames(llvm::StringRef argument) {
  // The registry prints an entry's options (list options and a pipeline's
  // own options included) only as help text on stdout: capture it.
  const mlir::PassRegistryEntry *entry = lookupEntry(argument);
  if (!entry)
    return std::nullopt;
  // descIndent must exceed the widest option, or the padding wraps around.
  std::optional<std::string> help = captureStdout(
      [&] { entry->printHelpStr(/*indent=*/0, /*descIndent=*/512); });
  if (!help)
    return std::nullopt;
  // The first line is the entry; each option line starts with "--NAME".
  std::vector<std::string> names;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(*help).split(lines, '\n');
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
    if (options.empty() || !isTofuPassArgument(name))
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
