//===- TDLOpInterface.td - Operations that TDL can describe -*- tablegen -*-===//
//
// The interface through which an operation gives its TDL description.
// External models implement it for upstream dialects.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_DIALECT_TDL_INTERFACES_TDLOPINTERFACE_TD
#define TOFU_DIALECT_TDL_INTERFACES_TDLOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def TDL_TDLOpInterface : OpInterface<"TDLOpInterface"> {
  let cppNamespace = "::tofu::tdl";
  let description = [{
    An operation that can describe what it computes in TDL. The description's
    inputs correspond one to one to the operation's operands (a scalar
    operand is a rank-0 input) and its outputs to the operation's results.

    An instance that cannot be described (a dynamic shape, a data-dependent
    index, an unrecognised reduction) fails and says why, so that
    `tdl-attach` can report it.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        Returns the TDL description of this operation, or failure with the
        reason in `reason`.
      }],
      /*retTy=*/"::mlir::FailureOr<::tofu::tdl::OpDesc>",
      /*methodName=*/"getTDLDescription",
      /*args=*/(ins "std::string &":$reason)>,
  ];
}

#endif // TOFU_DIALECT_TDL_INTERFACES_TDLOPINTERFACE_TD
