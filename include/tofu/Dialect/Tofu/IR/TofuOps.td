//===- TofuOps.td - Communication operations of tofu -------*- tablegen -*-===//

#ifndef TOFU_DIALECT_TOFU_IR_TOFUOPS_TD
#define TOFU_DIALECT_TOFU_IR_TOFUOPS_TD

include "tofu/Dialect/Tofu/IR/TofuBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Tofu_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tofu_Dialect, mnemonic, traits>;

def Tofu_FetchOp : Tofu_Op<"fetch", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Gives every rank an arbitrary region of a distributed tensor";
  let description = [{
    Every rank `v` of the grid holds the region of a tensor of global shape
    `shape` that starts at row `v` of `src_offsets` and has the shape of
    `input`. The result on rank `w` is the region that starts at row `w` of
    `dst_offsets` and has the shape of the result. Each offsets array holds
    one row of `rank` offsets per rank, in row-major rank order.

    The distinct held regions must be disjoint and must cover every
    requested region; a rank copies what it already holds and receives the
    rest from the ranks that hold it. This covers halos, strided or sliced
    reads and moves between several grid axes such as
    `[[0], [1]] -> [[1], [0]]` in one operation; `tofu-partition` uses the
    upstream `shard` collectives for plain all-gathers and all-to-alls.

    ```mlir
    // Rows cut over 2 ranks to columns cut over 2 ranks (an all-to-all):
    %1 = tofu.fetch %0 on @grid shape [4, 4] from [0, 0, 2, 0] to [0, 0, 0, 2]
        : tensor<2x4xf32> -> tensor<4x2xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$grid,
                       DenseI64ArrayAttr:$shape,
                       DenseI64ArrayAttr:$src_offsets,
                       DenseI64ArrayAttr:$dst_offsets);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `shape` $shape `from` $src_offsets `to` $dst_offsets
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // TOFU_DIALECT_TOFU_IR_TOFUOPS_TD
