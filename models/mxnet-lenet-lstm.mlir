// A model written with unregistered MXNet operators, as a framework importer
// would emit them: a LeNet-style CNN feeding one LSTM step, then a softmax
// classifier. Run with -allow-unregistered-dialect; the descriptions come
// from the bundled library tdl/frameworks.tdl.

func.func @forward(%image: tensor<8x1x28x28xf32>, %conv_w: tensor<20x1x5x5xf32>,
                   %conv_b: tensor<20xf32>, %fc_w: tensor<64x2880xf32>,
                   %fc_b: tensor<64xf32>, %h: tensor<8x64xf32>, %c: tensor<8x64xf32>,
                   %wx: tensor<256x64xf32>, %wh: tensor<256x64xf32>, %lstm_b: tensor<256xf32>,
                   %out_w: tensor<10x64xf32>, %out_b: tensor<10xf32>,
                   %label: tensor<8x10xf32>) -> (tensor<8x10xf32>, tensor<8x64xf32>) {
  %conv = "mxnet.Convolution"(%image, %conv_w) : (tensor<8x1x28x28xf32>, tensor<20x1x5x5xf32>) -> tensor<8x20x24x24xf32>
  %biased = "mxnet.broadcast_add"(%conv, %conv_b) : (tensor<8x20x24x24xf32>, tensor<20xf32>) -> tensor<8x20x24x24xf32>
  %act = "mxnet.Activation"(%biased) {act_type = "relu"} : (tensor<8x20x24x24xf32>) -> tensor<8x20x24x24xf32>
  %pool = "mxnet.Pooling"(%act) {kernel = 2 : i64, stride = 2 : i64} : (tensor<8x20x24x24xf32>) -> tensor<8x20x12x12xf32>
  %flat = "mxnet.Flatten"(%pool) : (tensor<8x20x12x12xf32>) -> tensor<8x2880xf32>
  %x = "mxnet.FullyConnected"(%flat, %fc_w, %fc_b) : (tensor<8x2880xf32>, tensor<64x2880xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %gates = "mxnet.LSTMGates"(%x, %h, %wx, %wh, %lstm_b) : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<256xf32>) -> tensor<8x256xf32>
  %i, %f, %g, %o = "mxnet.SliceChannel"(%gates) {num_outputs = 4 : i64} : (tensor<8x256xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>)
  %c_next, %h_next = "mxnet.LSTMCellState"(%i, %f, %g, %o, %c) : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
  %logits = "mxnet.FullyConnected"(%h_next, %out_w, %out_b) : (tensor<8x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %probs = "mxnet.SoftmaxOutput"(%logits, %label) : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xf32>
  return %probs, %c_next : tensor<8x10xf32>, tensor<8x64xf32>
}
