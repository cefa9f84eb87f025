; Definitions, uses, includes, namespaces: the code graph's tags for PHP (captures: _extract.py).
(class_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.interface
(trait_declaration name: (name) @name) @def.trait
(enum_declaration name: (name) @name) @def.enum
(function_definition name: (name) @name) @def.function
(method_declaration name: (name) @name) @def.method
(const_declaration (const_element (name) @name)) @def.constant
(namespace_definition name: (namespace_name) @package)
(namespace_use_declaration) @import
(require_expression) @import
(require_once_expression) @import
(include_expression) @import
(include_once_expression) @import
