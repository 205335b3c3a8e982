import { createRequire } from "node:module";

// onnx-proto is CommonJS (protobufjs-generated from ONNX's onnx.proto): loaded with require.
const { onnx } = createRequire(import.meta.url)("onnx-proto") as typeof import("onnx-proto");

/**
 * A linear scorer as an ONNX model, built from ONNX's own protobuf schema: y = x · W + b with x the
 * `[N, V]` float32 features and y `[N, 1]`. What a bag-of-words reward model is, small enough to check
 * by hand.
 */
export function linearScorerOnnx(weights: readonly number[], bias: number): Uint8Array {
  const V = weights.length;
  const FLOAT = onnx.TensorProto.DataType.FLOAT;
  const shape = (dims: Array<number | string>) => ({
    dim: dims.map((d) => (typeof d === "string" ? { dimParam: d } : { dimValue: d })),
  });
  const value = (name: string, dims: Array<number | string>) => onnx.ValueInfoProto.create({ name, type: { tensorType: { elemType: FLOAT, shape: shape(dims) } } });
  const graph = onnx.GraphProto.create({
    name: "linear-scorer",
    node: [
      onnx.NodeProto.create({ opType: "MatMul", input: ["features", "W"], output: ["xw"] }),
      onnx.NodeProto.create({ opType: "Add", input: ["xw", "b"], output: ["score"] }),
    ],
    initializer: [
      onnx.TensorProto.create({ name: "W", dims: [V, 1], dataType: FLOAT, floatData: [...weights] }),
      onnx.TensorProto.create({ name: "b", dims: [1], dataType: FLOAT, floatData: [bias] }),
    ],
    input: [value("features", ["N", V])],
    output: [value("score", ["N", 1])],
  });
  const model = onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: "", version: 17 }], producerName: "agentjet-test", graph });
  return onnx.ModelProto.encode(model).finish();
}
