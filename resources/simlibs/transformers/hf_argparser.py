"""HfArgumentParser: argparse built from dataclass fields, with the real parser's conventions
(`--flag`/`--no_flag` for booleans defaulting to True, "true"/"false" strings, choices for enums and
Literals, nargs="+" for lists, required fields without defaults, unknown arguments refused)."""
import dataclasses
import json
import os
import sys
import types
import typing
from argparse import ArgumentDefaultsHelpFormatter, ArgumentParser, ArgumentTypeError
from enum import Enum
from pathlib import Path
from typing import Literal, NewType, Optional, Union, get_type_hints

DataClass = NewType("DataClass", typing.Any)
DataClassType = NewType("DataClassType", typing.Any)


def string_to_bool(v):
    if isinstance(v, bool):
        return v
    if v.lower() in ("yes", "true", "t", "y", "1"):
        return True
    if v.lower() in ("no", "false", "f", "n", "0"):
        return False
    raise ArgumentTypeError("Truthy value expected: got %s but expected one of yes/no, true/false, t/f, y/n, 1/0 (case insensitive)." % v)


def make_choice_type_function(choices):
    str_to_choice = {str(choice): choice for choice in choices}
    return lambda arg: str_to_choice.get(arg, arg)


def HfArg(*, aliases=None, help=None, default=dataclasses.MISSING, default_factory=dataclasses.MISSING, metadata=None, **kwargs):
    if metadata is None:
        metadata = {}
    if aliases is not None:
        metadata["aliases"] = aliases
    if help is not None:
        metadata["help"] = help
    return dataclasses.field(metadata=metadata, default=default, default_factory=default_factory, **kwargs)


_UNION_TYPES = (Union,) + ((types.UnionType,) if hasattr(types, "UnionType") else ())


class HfArgumentParser(ArgumentParser):
    def __init__(self, dataclass_types=None, **kwargs):
        if "formatter_class" not in kwargs:
            kwargs["formatter_class"] = ArgumentDefaultsHelpFormatter
        super().__init__(**kwargs)
        if dataclass_types is None:
            dataclass_types = []
        if dataclasses.is_dataclass(dataclass_types):
            dataclass_types = [dataclass_types]
        self.dataclass_types = list(dataclass_types)
        for dtype in self.dataclass_types:
            self._add_dataclass_arguments(dtype)

    @staticmethod
    def _parse_dataclass_field(parser, field):
        long_options = ["--%s" % field.name]
        if "_" in field.name:
            long_options.append("--%s" % field.name.replace("_", "-"))
        kwargs = field.metadata.copy()
        if isinstance(field.type, str):
            raise RuntimeError("Unresolved type detected, which should have been done with the help of `typing.get_type_hints` method by default")
        aliases = kwargs.pop("aliases", [])
        if isinstance(aliases, str):
            aliases = [aliases]
        origin_type = getattr(field.type, "__origin__", field.type)
        if origin_type in _UNION_TYPES or (hasattr(types, "UnionType") and isinstance(field.type, types.UnionType)):
            args = field.type.__args__
            if str not in args and (len(args) != 2 or type(None) not in args):
                raise ValueError(
                    "Only `Union[X, NoneType]` (i.e., `Optional[X]`) is allowed for `Union` because the argument parser only supports one type per "
                    "argument. Problem encountered in field '%s'." % field.name
                )
            if type(None) not in args:
                field.type = args[0] if args[1] is str else args[1]
                origin_type = getattr(field.type, "__origin__", field.type)
            elif bool not in args:
                field.type = args[0] if isinstance(None, args[1]) else args[1]
                origin_type = getattr(field.type, "__origin__", field.type)
        bool_kwargs = {}
        if origin_type is Literal or (isinstance(field.type, type) and issubclass(field.type, Enum)):
            if origin_type is Literal:
                kwargs["choices"] = field.type.__args__
            else:
                kwargs["choices"] = [x.value for x in field.type]
            kwargs["type"] = make_choice_type_function(kwargs["choices"])
            if field.default is not dataclasses.MISSING:
                kwargs["default"] = field.default
            else:
                kwargs["required"] = True
        elif field.type is bool or field.type == Optional[bool]:
            bool_kwargs = dict(kwargs)
            kwargs["type"] = string_to_bool
            if field.type is bool or (field.default is not None and field.default is not dataclasses.MISSING):
                default = False if field.default is dataclasses.MISSING else field.default
                kwargs["default"] = default
                kwargs["nargs"] = "?"
                kwargs["const"] = True
        elif isinstance(origin_type, type) and issubclass(origin_type, list):
            kwargs["type"] = field.type.__args__[0] if getattr(field.type, "__args__", None) else str
            kwargs["nargs"] = "+"
            if field.default_factory is not dataclasses.MISSING:
                kwargs["default"] = field.default_factory()
            elif field.default is dataclasses.MISSING:
                kwargs["required"] = True
        else:
            kwargs["type"] = field.type if callable(field.type) and not getattr(field.type, "__origin__", None) else str
            if field.type is dict or getattr(field.type, "__origin__", None) is dict:
                kwargs["type"] = json.loads
            if field.default is not dataclasses.MISSING:
                kwargs["default"] = field.default
            elif field.default_factory is not dataclasses.MISSING:
                kwargs["default"] = field.default_factory()
            else:
                kwargs["required"] = True
        parser.add_argument(*long_options, *aliases, **kwargs)
        if field.default is True and (field.type is bool or field.type == Optional[bool]):
            bool_kwargs["default"] = False
            parser.add_argument("--no_%s" % field.name, "--no-%s" % field.name.replace("_", "-"), action="store_false", dest=field.name, **bool_kwargs)

    def _add_dataclass_arguments(self, dtype):
        if hasattr(dtype, "_argument_group_name"):
            parser = self.add_argument_group(dtype._argument_group_name)
        else:
            parser = self
        try:
            type_hints = get_type_hints(dtype)
        except NameError:
            raise RuntimeError("Type resolution failed for %s. Try declaring the class in global scope or removing line of `from __future__ import annotations` which opts in Postponed Evaluation of Annotations (PEP 563)" % dtype)
        for field in dataclasses.fields(dtype):
            if not field.init:
                continue
            field.type = type_hints[field.name]
            self._parse_dataclass_field(parser, field)

    def parse_args_into_dataclasses(self, args=None, return_remaining_strings=False, look_for_args_file=True, args_filename=None,
                                    args_file_flag=None):
        if args_file_flag or args_filename or (look_for_args_file and len(sys.argv)):
            args_files = []
            if args_filename:
                args_files.append(Path(args_filename))
            elif look_for_args_file and len(sys.argv):
                args_files.append(Path(sys.argv[0]).with_suffix(".args"))
            file_args = []
            for args_file in args_files:
                if args_file.exists():
                    file_args += args_file.read_text().split()
            args = file_args + args if args is not None else file_args + sys.argv[1:]
        namespace, remaining_args = self.parse_known_args(args=args)
        outputs = []
        for dtype in self.dataclass_types:
            keys = {f.name for f in dataclasses.fields(dtype) if f.init}
            inputs = {k: v for k, v in vars(namespace).items() if k in keys}
            for k in keys:
                delattr(namespace, k)
            outputs.append(dtype(**inputs))
        if len(namespace.__dict__) > 0:
            outputs.append(namespace)
        if return_remaining_strings:
            return (*outputs, remaining_args)
        if remaining_args:
            raise ValueError("Some specified arguments are not used by the HfArgumentParser: %s" % remaining_args)
        return (*outputs,)

    def parse_dict(self, args, allow_extra_keys=False):
        unused_keys = set(args.keys())
        outputs = []
        for dtype in self.dataclass_types:
            keys = {f.name for f in dataclasses.fields(dtype) if f.init}
            inputs = {k: v for k, v in args.items() if k in keys}
            unused_keys.difference_update(inputs.keys())
            outputs.append(dtype(**inputs))
        if not allow_extra_keys and unused_keys:
            raise ValueError("Some keys are not used by the HfArgumentParser: %s" % sorted(unused_keys))
        return tuple(outputs)

    def parse_json_file(self, json_file, allow_extra_keys=False):
        with open(Path(json_file), encoding="utf-8") as open_json_file:
            data = json.loads(open_json_file.read())
        return self.parse_dict(data, allow_extra_keys=allow_extra_keys)

    def parse_yaml_file(self, yaml_file, allow_extra_keys=False):
        import yaml

        return self.parse_dict(yaml.safe_load(Path(yaml_file).read_text()), allow_extra_keys=allow_extra_keys)
