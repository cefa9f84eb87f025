; Definitions, imports: the code graph's tags for TypeScript and TSX (captures: _extract.py).
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(function_signature name: (identifier) @name) @def.function
(class_declaration name: (type_identifier) @name) @def.class
(abstract_class_declaration name: (type_identifier) @name) @def.class
(interface_declaration name: (type_identifier) @name) @def.interface
(type_alias_declaration name: (type_identifier) @name) @def.type
(enum_declaration name: (identifier) @name) @def.enum
(internal_module name: (identifier) @name) @def.module
(method_definition name: (property_identifier) @name) @def.method
(method_signature name: (property_identifier) @name) @def.method
(abstract_method_signature name: (property_identifier) @name) @def.method
(lexical_declaration
  (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)])) @def.function
(program (lexical_declaration (variable_declarator name: (identifier) @name)) @def.constant)
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name)) @def.constant))
(import_statement) @import
(export_statement source: (string)) @import
(variable_declarator
  value: (call_expression function: (identifier) @_fn (#eq? @_fn "require"))) @import
