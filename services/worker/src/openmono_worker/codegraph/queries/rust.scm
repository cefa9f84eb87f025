; Definitions, imports, impl blocks: the code graph's tags for Rust (captures: _extract.py).
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(union_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(trait_item name: (type_identifier) @name) @def.trait
(type_item name: (type_identifier) @name) @def.type
(const_item name: (identifier) @name) @def.constant
(static_item name: (identifier) @name) @def.constant
(mod_item name: (identifier) @name) @def.module
(macro_definition name: (identifier) @name) @def.macro
(impl_item) @scope
(use_declaration) @import
(mod_item !body) @import
