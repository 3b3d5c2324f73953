//! Languages of the code model: which grammar a file gets (by extension) and, per grammar,
//! which node kinds are definitions, statement containers, arms and compound statements.

use std::path::Path;

/// A language the code model knows. `Text` is the line-based fallback for any other text file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    Java,
    Go,
    Rust,
    Python,
    Scala,
    Cpp,
    Text,
}

impl Lang {
    /// The language of a file, chosen by its extension. Files with an unknown extension get
    /// the line-based fallback.
    pub fn from_path(path: &Path) -> Lang {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        match ext.as_str() {
            "java" => Lang::Java,
            "go" => Lang::Go,
            "rs" => Lang::Rust,
            "py" | "pyi" => Lang::Python,
            "scala" | "sc" => Lang::Scala,
            // C has no grammar of its own here; the C++ grammar parses most C well enough.
            "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ipp" | "c" | "h" => {
                Lang::Cpp
            }
            _ => Lang::Text,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Lang::Java => "java",
            Lang::Go => "go",
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::Scala => "scala",
            Lang::Cpp => "cpp",
            Lang::Text => "text",
        }
    }

    /// The tree-sitter grammar, `None` for the fallback.
    pub fn grammar(self) -> Option<tree_sitter::Language> {
        Some(match self {
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Scala => tree_sitter_scala::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Lang::Text => return None,
        })
    }

    /// Whether `#` starts a line comment (else `//`), for the lexical scan.
    pub fn hash_comments(self) -> bool {
        matches!(self, Lang::Python)
    }

    pub(crate) fn rules(self) -> &'static Rules {
        match self {
            Lang::Java => &JAVA,
            Lang::Go => &GO,
            Lang::Rust => &RUST,
            Lang::Python => &PYTHON,
            Lang::Scala => &SCALA,
            Lang::Cpp => &CPP,
            Lang::Text => &TEXT,
        }
    }
}

/// How a grammar's node kinds map onto blocks.
pub(crate) struct Rules {
    /// Definition node kinds and the kind of definition each is ("class", "function", …).
    pub defs: &'static [(&'static str, &'static str)],
    /// Nodes whose named children are statements (bodies, blocks, class bodies).
    pub containers: &'static [&'static str],
    /// Branches of a compound statement that are blocks of their own (catch, else, match arm).
    pub arms: &'static [&'static str],
    /// Statements that hold further statements (if, loops, try, switch, match).
    pub compounds: &'static [&'static str],
    /// Nodes that wrap a definition and are not blocks themselves (decorators, templates).
    pub wrappers: &'static [&'static str],
    /// Children of containers that never become blocks (imports, comments).
    pub skip: &'static [&'static str],
    /// Definition kinds that hold methods: a function inside one of them is a method.
    pub type_defs: &'static [&'static str],
}

impl Rules {
    pub fn def_kind(&self, kind: &str) -> Option<&'static str> {
        self.defs.iter().find(|(k, _)| *k == kind).map(|(_, d)| *d)
    }
    pub fn is_container(&self, kind: &str) -> bool {
        self.containers.contains(&kind)
    }
    pub fn is_arm(&self, kind: &str) -> bool {
        self.arms.contains(&kind)
    }
    pub fn is_compound(&self, kind: &str) -> bool {
        self.compounds.contains(&kind)
    }
    pub fn is_wrapper(&self, kind: &str) -> bool {
        self.wrappers.contains(&kind)
    }
    pub fn is_skipped(&self, kind: &str) -> bool {
        self.skip.contains(&kind) || kind.ends_with("comment")
    }
}

const JAVA: Rules = Rules {
    defs: &[
        ("class_declaration", "class"),
        ("interface_declaration", "interface"),
        ("enum_declaration", "enum"),
        ("record_declaration", "record"),
        ("annotation_type_declaration", "annotation"),
        ("method_declaration", "method"),
        ("constructor_declaration", "constructor"),
        ("compact_constructor_declaration", "constructor"),
    ],
    containers: &[
        "program",
        "block",
        "class_body",
        "interface_body",
        "enum_body",
        "enum_body_declarations",
        "constructor_body",
        "switch_block",
        "switch_block_statement_group",
        "annotation_type_body",
    ],
    arms: &[
        "catch_clause",
        "finally_clause",
        "switch_block_statement_group",
        "switch_rule",
    ],
    compounds: &[
        "if_statement",
        "for_statement",
        "enhanced_for_statement",
        "while_statement",
        "do_statement",
        "try_statement",
        "try_with_resources_statement",
        "switch_expression",
        "synchronized_statement",
        "labeled_statement",
    ],
    wrappers: &[],
    skip: &[
        "import_declaration",
        "package_declaration",
        "switch_label",
        "line_comment",
        "block_comment",
    ],
    type_defs: &[
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
    ],
};

const GO: Rules = Rules {
    defs: &[
        ("function_declaration", "function"),
        ("method_declaration", "method"),
        ("type_declaration", "type"),
    ],
    containers: &["source_file", "block", "statement_list"],
    arms: &[
        "expression_case",
        "default_case",
        "type_case",
        "communication_case",
    ],
    compounds: &[
        "if_statement",
        "for_statement",
        "expression_switch_statement",
        "type_switch_statement",
        "select_statement",
        "labeled_statement",
    ],
    wrappers: &[],
    skip: &["import_declaration", "package_clause", "comment"],
    type_defs: &[],
};

const RUST: Rules = Rules {
    defs: &[
        ("function_item", "function"),
        ("impl_item", "impl"),
        ("struct_item", "struct"),
        ("enum_item", "enum"),
        ("union_item", "union"),
        ("trait_item", "trait"),
        ("mod_item", "module"),
        ("macro_definition", "macro"),
    ],
    containers: &["source_file", "block", "declaration_list", "match_block"],
    arms: &["match_arm", "else_clause"],
    compounds: &[
        "if_expression",
        "match_expression",
        "for_expression",
        "while_expression",
        "loop_expression",
        "unsafe_block",
    ],
    wrappers: &[],
    skip: &[
        "use_declaration",
        "attribute_item",
        "inner_attribute_item",
        "line_comment",
        "block_comment",
        "extern_crate_declaration",
    ],
    type_defs: &["impl_item", "trait_item"],
};

const PYTHON: Rules = Rules {
    defs: &[
        ("function_definition", "function"),
        ("class_definition", "class"),
    ],
    containers: &["module", "block"],
    arms: &[
        "elif_clause",
        "else_clause",
        "except_clause",
        "except_group_clause",
        "finally_clause",
        "case_clause",
    ],
    compounds: &[
        "if_statement",
        "for_statement",
        "while_statement",
        "try_statement",
        "with_statement",
        "match_statement",
    ],
    wrappers: &["decorated_definition"],
    skip: &["import_statement", "import_from_statement", "comment"],
    type_defs: &["class_definition"],
};

const SCALA: Rules = Rules {
    defs: &[
        ("class_definition", "class"),
        ("object_definition", "object"),
        ("trait_definition", "trait"),
        ("enum_definition", "enum"),
        ("function_definition", "function"),
        ("given_definition", "given"),
    ],
    containers: &[
        "compilation_unit",
        "block",
        "template_body",
        "indented_block",
        "case_block",
        "indented_cases",
        "enum_body",
    ],
    arms: &["case_clause", "catch_clause", "finally_clause"],
    compounds: &[
        "if_expression",
        "match_expression",
        "try_expression",
        "for_expression",
        "while_expression",
        "do_while_expression",
    ],
    wrappers: &[],
    skip: &[
        "import_declaration",
        "package_clause",
        "comment",
        "block_comment",
    ],
    type_defs: &[
        "class_definition",
        "object_definition",
        "trait_definition",
        "enum_definition",
    ],
};

const CPP: Rules = Rules {
    defs: &[
        ("function_definition", "function"),
        ("class_specifier", "class"),
        ("struct_specifier", "struct"),
        ("union_specifier", "union"),
        ("enum_specifier", "enum"),
        ("namespace_definition", "namespace"),
    ],
    containers: &[
        "translation_unit",
        "compound_statement",
        "declaration_list",
        "field_declaration_list",
        "case_statement",
    ],
    arms: &["catch_clause", "else_clause", "case_statement"],
    compounds: &[
        "if_statement",
        "for_statement",
        "for_range_loop",
        "while_statement",
        "do_statement",
        "switch_statement",
        "try_statement",
    ],
    wrappers: &["template_declaration"],
    skip: &[
        "preproc_include",
        "comment",
        "using_declaration",
        "access_specifier",
    ],
    type_defs: &["class_specifier", "struct_specifier", "union_specifier"],
};

const TEXT: Rules = Rules {
    defs: &[],
    containers: &[],
    arms: &[],
    compounds: &[],
    wrappers: &[],
    skip: &[],
    type_defs: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_grammar_by_extension() {
        assert_eq!(Lang::from_path(Path::new("a/B.java")), Lang::Java);
        assert_eq!(Lang::from_path(Path::new("x.GO")), Lang::Go);
        assert_eq!(Lang::from_path(Path::new("lib.rs")), Lang::Rust);
        assert_eq!(Lang::from_path(Path::new("m.py")), Lang::Python);
        assert_eq!(Lang::from_path(Path::new("K.scala")), Lang::Scala);
        assert_eq!(Lang::from_path(Path::new("n.cc")), Lang::Cpp);
        assert_eq!(Lang::from_path(Path::new("n.h")), Lang::Cpp);
        assert_eq!(Lang::from_path(Path::new("conf.yaml")), Lang::Text);
        assert_eq!(Lang::from_path(Path::new("Makefile")), Lang::Text);
        for l in [
            Lang::Java,
            Lang::Go,
            Lang::Rust,
            Lang::Python,
            Lang::Scala,
            Lang::Cpp,
        ] {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&l.grammar().unwrap()).unwrap();
        }
        assert!(Lang::Text.grammar().is_none());
    }
}
