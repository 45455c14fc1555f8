//===- Passes.td - TDL passes --------------------------------*- tablegen -*-===//
//
// Passes of the TDL dialect.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_DIALECT_TDL_TRANSFORMS_PASSES_TD
#define TOFU_DIALECT_TDL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TDLAttach : Pass<"tdl-attach", "mlir::ModuleOp"> {
  let summary = "Attach a TDL description to every tensor operation";
  let description = [{
    Gives every operation that produces a ranked tensor a `tdl.desc`
    attribute. The description comes from, in order of preference:

    1. a `tdl.desc` attribute the operation already has (it is checked);
    2. a `.tdl` library that names the operation (the bundled library of
       framework operators and any `library` given as an option);
    3. the operation's `TDLOpInterface` (upstream linalg, tensor, arith,
       math and tosa operations).

    Every description is checked against the operation's operand and result
    shapes. An operation that cannot be described is an error, unless
    `allow-opaque` is set: it then gets an opaque whole-tensor description,
    which leaves it unpartitioned, and a remark.

    `tensor.empty` and constants are sources with nothing to describe and are
    skipped.

    Before:

    ```mlir
    %0 = linalg.matmul ins(%a, %b : tensor<8x6xf32>, tensor<6x4xf32>)
                       outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
    ```

    After:

    ```mlir
    %0 = linalg.matmul {tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0, d1) =
             sum(d2) in0[d0, d2] * in1[d2, d1]>} ins(...) outs(...)
    ```
  }];
  let options = [
    ListOption<"libraries", "library", "std::string",
               "Additional .tdl library files">,
    Option<"useBundledLibrary", "bundled-library", "bool",
           /*default=*/"true",
           "Load the bundled library of framework operators">,
    Option<"allowOpaque", "allow-opaque", "bool", /*default=*/"false",
           "Describe indescribable operations as opaque instead of failing">,
  ];
  let dependentDialects = ["::tofu::tdl::TDLDialect"];
}

#endif // TOFU_DIALECT_TDL_TRANSFORMS_PASSES_TD
