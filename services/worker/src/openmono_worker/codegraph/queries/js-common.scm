; Definitions and imports JavaScript and TypeScript / TSX write alike (captures: _extract.py).
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(method_definition name: (property_identifier) @name) @def.method
(lexical_declaration
  (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)])) @def.function
(program (lexical_declaration (variable_declarator name: (identifier) @name)) @def.constant)
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name)) @def.constant))
(import_statement) @import
(export_statement source: (string)) @import
(variable_declarator
  value: (call_expression function: (identifier) @_fn (#eq? @_fn "require"))) @import
