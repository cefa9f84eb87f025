; Definitions (and prototypes), includes: the code graph's tags for C (captures: _extract.py).
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @def.function
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @def.function
(declaration declarator: (function_declarator declarator: (identifier) @name)) @def.function
(declaration
  declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @def.function
(struct_specifier name: (type_identifier) @name body: (_)) @def.struct
(union_specifier name: (type_identifier) @name body: (_)) @def.struct
(enum_specifier name: (type_identifier) @name body: (_)) @def.enum
(type_definition declarator: (type_identifier) @name) @def.type
(preproc_def name: (identifier) @name) @def.macro
(preproc_function_def name: (identifier) @name) @def.macro
(preproc_include path: (_)) @import
