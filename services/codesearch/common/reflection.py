"""Server reflection that also resolves method symbols (`grpcurl describe pkg.Service.Method`).

grpcio-reflection asks the descriptor pool for the file containing a symbol. The upb pool that protobuf's Python
package uses finds services, messages, fields and enums, but not `Service.Method` (KeyError, so reflection
answered NOT_FOUND and `grpcurl describe codesearch.v1.SearchService.StreamSearch` failed). A method lives in
its service's file, so on a miss we look the name up as a method of its parent service.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import descriptor_pool
from google.protobuf.descriptor import FileDescriptor
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc
from grpc_reflection.v1alpha._async import ReflectionServicer  # the aio servicer grpc_reflection itself uses
from grpc_reflection.v1alpha._base import _file_descriptor_response, _not_found_error

SERVICE_NAME = reflection.SERVICE_NAME


def file_containing_symbol(pool: descriptor_pool.DescriptorPool, symbol: str) -> FileDescriptor:
    """The file that defines `symbol`: whatever the pool finds, or the file of the service of a method.

    Raises KeyError when neither names a known symbol.
    """
    try:
        return pool.FindFileContainingSymbol(symbol)
    except KeyError:
        service_name, _, method_name = symbol.rpartition(".")
        if not service_name:
            raise
        try:
            service = pool.FindServiceByName(service_name)
        except KeyError:
            raise KeyError(symbol) from None
        if method_name not in service.methods_by_name:
            raise KeyError(symbol) from None
        return service.file


class MethodAwareReflectionServicer(ReflectionServicer):
    """grpc_reflection's aio servicer, with `file_containing_symbol` resolving `Service.Method` too."""

    def _file_containing_symbol(self, request: Any, fully_qualified_name: str) -> Any:
        try:
            descriptor = file_containing_symbol(self._pool, fully_qualified_name)
        except KeyError:
            return _not_found_error(request)
        return _file_descriptor_response(descriptor, request)


def enable_server_reflection(service_names: list[str], server: grpc.aio.Server) -> None:
    """Registers grpc.reflection.v1alpha for the named services (and reflection itself) on an aio server."""
    servicer = MethodAwareReflectionServicer([*service_names, SERVICE_NAME])
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
