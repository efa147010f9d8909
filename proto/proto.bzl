"""Offline protobuf/gRPC C++ code generation with the system protoc."""

def cc_grpc_proto(name, src, deps = [], imports = [], grpc = True, visibility = None):
    """Generates <name> (cc_library) from one .proto under proto/.

    Args:
      name: library name.
      src: path of the .proto relative to this package (phaseloop/v1/x.proto).
      deps: other cc_grpc_proto libraries it imports.
      imports: the .proto files of those libraries (protoc reads them).
      grpc: also generate the service stubs.
    """
    base = src[:-len(".proto")]
    outs = [base + ".pb.h", base + ".pb.cc"]
    if grpc:
        outs += [base + ".grpc.pb.h", base + ".grpc.pb.cc"]
    grpc_flags = ""
    if grpc:
        grpc_flags = ("--grpc_out=$(GENDIR)/proto " +
                      "--plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin ")
    native.genrule(
        name = name + "_gen",
        srcs = [src] + imports,
        outs = outs,
        cmd = ("protoc -Iproto --cpp_out=$(GENDIR)/proto " + grpc_flags +
               "$(location " + src + ")"),
    )
    native.cc_library(
        name = name,
        srcs = [o for o in outs if o.endswith(".cc")],
        hdrs = [o for o in outs if o.endswith(".h")],
        includes = ["."],
        deps = deps + (["@system_libs//:grpc"] if grpc else []) + ["@system_libs//:protobuf"],
        visibility = visibility,
    )
