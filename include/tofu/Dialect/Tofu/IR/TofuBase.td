//===- TofuBase.td - The tofu dialect and its attributes ---*- tablegen -*-===//
//
// The dialect of partitioned programs: the layout of a distributed tensor
// over the process grid, with any pending (partial) reduction.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_DIALECT_TOFU_IR_TOFUBASE_TD
#define TOFU_DIALECT_TOFU_IR_TOFUBASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"

def Tofu_Dialect : Dialect {
  let name = "tofu";
  let cppNamespace = "::tofu";
  let summary = "Partitioned SPMD programs of Tofu";
  let description = [{
    `tofu-partition` turns a training step that carries a plan into an SPMD
    function on a `shard.grid` with one axis per recursion step. The
    dialect records how every distributed tensor is laid out
    (`#tofu.layout`) and provides `tofu.fetch`, the one communication
    operation that moves arbitrary per-rank regions (halos, strided reads,
    multi-axis re-layouts). Conversions that are exactly an upstream
    collective use it (`shard.all_gather`, `shard.all_to_all`,
    `shard.all_slice`), and reductions of partial values use
    `shard.all_reduce` and `shard.reduce_scatter`.
  }];
  let useDefaultAttributePrinterParser = 1;
}

class Tofu_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tofu_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tofu_LayoutAttr : Tofu_Attr<"Layout", "layout"> {
  let summary = "How a tensor is laid out over the process grid";
  let description = [{
    One entry per grid axis (recursion step): the tensor dimension that the
    axis cuts, or -1 when the tensor is replicated along the axis. `partial`
    lists the grid axes over which the local values are partial results that
    still have to be combined with the reduction of the producing operator.

    ```mlir
    // Rows cut over axis 0, columns over axis 1, replicated along axis 2:
    #tofu.layout<[0, 1, -1]>
    // Replicated along both axes, with a pending sum over axis 1:
    #tofu.layout<[-1, -1], partial = [1]>
    ```

    Cutting dimension d at axis i splits the extent that is left after the
    earlier axes into k_i balanced chunks; rank coordinate c_i takes chunk
    c_i (Tofu's recursive halving).
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$axes,
                        OptionalArrayRefParameter<"int64_t">:$partial);
  let assemblyFormat =
      "`<` `[` $axes `]` (`,` `partial` `=` `[` $partial^ `]`)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Checks the layout against a tensor of rank `rank`.
    ::mlir::LogicalResult verifyRank(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        int64_t rank) const;
  }];
}

#endif // TOFU_DIALECT_TOFU_IR_TOFUBASE_TD
