"""The schedule of a dlnetwork: its layers in topological order, each with where its inputs come from.

Built once per graph change with the standard library's :class:`graphlib.TopologicalSorter`;
running the network walks the schedule and does nothing else, so ``torch.compile`` sees a
straight line of layer calls.
"""

from __future__ import annotations

import graphlib
from collections.abc import Mapping
from typing import Any, NamedTuple

from .._errors import DLFormatError

Port = tuple[str, str]  # (layer name, port name)


class Step(NamedTuple):
    name: str
    layer: Any
    sources: tuple[Port | int, ...]  # a layer output, or the index of a network input
    inputs_from: str  # for error messages: "in1 from 'wordemb', in2 from 'posemb'"


class Schedule(NamedTuple):
    steps: list[Step]
    input_names: tuple[str, ...]
    outputs: tuple[Port, ...]  # the default outputs, net.OutputNames resolved


def releases(steps: list[Step], outputs: tuple[Port, ...]) -> tuple[tuple[Port | int, ...], ...]:
    """For each step, the values no later step reads and that are not ``outputs``: a run drops them
    once the step has its arguments, so that a large intermediate is freed as soon as it is used, as
    in a plain sequence of torch calls (holding every intermediate to the end of the run costs memory
    and, on CPU, time: fresh allocations instead of reused, cache-warm ones)."""
    last: dict[Port | int, int] = {}
    for index, step in enumerate(steps):
        for source in step.sources:
            last[source] = index
    kept = set(outputs)
    return tuple(
        tuple(
            source for source in dict.fromkeys(step.sources) if last[source] == index and source not in kept
        )
        for index, step in enumerate(steps)
    )


def order(layers: Mapping[str, Any], links: Mapping[Port, Port]) -> list[str]:
    """Layer names in an order where every layer comes after the layers feeding it.

    Among layers that are ready at the same time, the order they were added is kept.
    """
    sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
    for name in layers:
        sorter.add(name)
    for (target, _), (source, _) in links.items():
        sorter.add(target, source)
    position = {name: index for index, name in enumerate(layers)}
    try:
        sorter.prepare()
    except graphlib.CycleError as error:
        cycle = error.args[1]
        loop = " -> ".join(f"'{name}'" for name in cycle)
        raise DLFormatError(
            f"the network has a cycle through layers {loop}; a dlnetwork must be acyclic"
        ) from None
    result: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready(), key=position.__getitem__)
        result += ready
        sorter.done(*ready)
    return result


def build(
    layers: Mapping[str, Any],
    links: Mapping[Port, Port],
    inputs: list[Port],
    port_name: Any,
    input_names: tuple[str, ...],
    outputs: tuple[Port, ...],
) -> Schedule:
    """The schedule: ``inputs`` are the network inputs (``(name, "")`` for input layers)."""
    index_of = {port: index for index, port in enumerate(inputs)}
    steps = []
    for name in order(layers, links):
        layer = layers[name]
        if layer.NumInputs == 0:
            sources: tuple[Port | int, ...] = (index_of[(name, "")],)
            described = "the network input"
        else:
            # every input is connected, or else a network input (the network checked its inputs)
            sources = tuple(
                links[(name, port)] if (name, port) in links else index_of[(name, port)]
                for port in layer.InputNames
            )
            described = ", ".join(
                f"{port} from "
                + (
                    f"'{port_name(links[(name, port)], 'out')}'"
                    if (name, port) in links
                    else "the network input"
                )
                for port in layer.InputNames
            )
        steps.append(Step(name, layer, sources, described))
    return Schedule(steps, input_names, outputs)
