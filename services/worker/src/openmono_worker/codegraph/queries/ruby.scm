; Definitions, requires: the code graph's tags for Ruby (captures: _extract.py).
(class name: (_) @name) @def.class
(module name: (_) @name) @def.module
(method name: (_) @name) @def.method
(singleton_method name: (_) @name) @def.method
(assignment left: (constant) @name) @def.constant
(call
  method: (identifier) @_fn (#any-of? @_fn "require" "require_relative" "load" "autoload")
  arguments: (argument_list)) @import
