  func.func @main() {
    %x = arith.constant dense<[[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [3.0, 1.0, -1.0], [0.5, -0.5, 2.0]]> : tensor<4x3xf64>
    %l = arith.constant dense<[2, 0, 1, 5]> : tensor<4xLABEL>
    %loss = call @f(%x, %l) : (tensor<4x3xf64>, tensor<4xLABEL>) -> tensor<f64>
    %v = tensor.extract %loss[] : tensor<f64>
    vector.print %v : f64
    return
  }
}
