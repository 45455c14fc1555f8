//===- TDLBase.td - The TDL dialect and its attributes -----*- tablegen -*-===//
//
// The Tensor Description Language dialect: the `#tdl.desc` attribute that
// carries an operator's TDL description on the IR.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_DIALECT_TDL_IR_TDLBASE_TD
#define TOFU_DIALECT_TDL_IR_TDLBASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"

def TDL_Dialect : Dialect {
  let name = "tdl";
  let cppNamespace = "::tofu::tdl";
  let summary = "The Tensor Description Language of Tofu";
  let description = [{
    TDL describes what an operator computes, independently of how it is
    implemented: every output element is a lambda over index variables, with
    affine accesses to the inputs, reductions (`sum`, `max`, `min`, `prod`)
    and opaque functions. Tofu's strategy analysis reads the description to
    find every partition-n-reduce strategy of the operator.

    The dialect defines the `#tdl.desc` attribute. The `tdl-attach` pass
    attaches one to every tensor operation, under the attribute name
    `tdl.desc`, from the operation's `TDLOpInterface`, from a `.tdl`
    library, or from an explicit attribute the user wrote.
  }];
  let useDefaultAttributePrinterParser = 0;
  let extraClassDeclaration = [{
    ::mlir::Attribute parseAttribute(::mlir::DialectAsmParser &parser,
                                     ::mlir::Type type) const override;
    void printAttribute(::mlir::Attribute attr,
                        ::mlir::DialectAsmPrinter &printer) const override;

    /// The discardable attribute name under which descriptions are attached.
    static constexpr ::llvm::StringLiteral getDescAttrName() {
      return ::llvm::StringLiteral("tdl.desc");
    }
  }];
}

class TDL_Attr<string name, list<Trait> traits = []>
    : AttrDef<TDL_Dialect, name, traits>;

// The text form is parsed by the dialect with TDL's own parser, so the
// attribute declares no mnemonic or assembly format.
def TDL_DescAttr : TDL_Attr<"Desc"> {
  let attrName = "tdl.desc";
  let summary = "A TDL description of an operator";
  let description = [{
    The text form mirrors the Tofu paper's lambdas:

    ```mlir
    #tdl.desc<(data, filters) -> (b, co, x) = sum(ci, dx) data[b, ci, x + dx] * filters[ci, co, dx]>
    #tdl.desc<(m) -> (b, i, j) = opaque(m[b, :, :])>
    ```

    The inputs in parentheses before `->` name the operation's operands in
    order; each output names one result. See `docs/tdl-reference.md` for the
    grammar.
  }];
  let parameters = (ins "::tofu::tdl::OpDesc":$desc);
  let extraClassDeclaration = [{
    /// Parses the text of a description (without `#tdl.desc<...>`).
    static DescAttr parse(::mlir::MLIRContext *context, ::llvm::StringRef text,
                          std::string &error);
  }];
}

#endif // TOFU_DIALECT_TDL_IR_TDLBASE_TD
