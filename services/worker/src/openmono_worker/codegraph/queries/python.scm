; Definitions, imports: the code graph's tags for Python (captures: _extract.py).
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function
(module (assignment left: (identifier) @name) @def.constant)
(import_statement) @import
(import_from_statement) @import
