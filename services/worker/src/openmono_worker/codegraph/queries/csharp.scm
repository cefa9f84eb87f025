; Definitions, usings, namespaces: the code graph's tags for C# (captures: _extract.py).
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(struct_declaration name: (identifier) @name) @def.struct
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(delegate_declaration name: (identifier) @name) @def.type
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(property_declaration name: (identifier) @name) @def.property
(namespace_declaration name: (_) @package)
(file_scoped_namespace_declaration name: (_) @package)
(using_directive) @import
