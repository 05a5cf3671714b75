//! terraform / tofu plan, apply, destroy: folds the progress lines (`Refreshing state...`,
//! `Reading...`, `Read complete`, `Still creating...`, and `Creating...` when the same address
//! reports its completion) and the `(known after apply)` / `<computed>` attribute lines of
//! resources that are to be created. Every resource header (`# x will be created`,
//! `must be replaced`, …), every other attribute line (`~`, `+`, `-`, `# forces replacement`),
//! the `# (N unchanged … hidden)` lines, `Plan:`, `Apply complete!`, and every Error and
//! Warning block stay verbatim. Output without a terraform shape is refused.

use crate::doc::facts::is_fact;
use crate::doc::label::Label;
use crate::doc::{Doc, Piece};

pub fn matches(label: &Label) -> bool {
    matches!(label.program, "terraform" | "tofu" | "terragrunt")
        && label
            .args
            .iter()
            .any(|a| matches!(*a, "plan" | "apply" | "destroy" | "refresh"))
}

fn recognised(line: &str) -> bool {
    let t = line.trim_start_matches(['│', '╷', ' ']);
    (t.starts_with("Plan: ") && t.contains(" to add, "))
        || t.starts_with("Apply complete! Resources: ")
        || t.starts_with("Destroy complete! Resources: ")
        || t.starts_with("No changes. ")
        || t == "Terraform will perform the following actions:"
}

/// `addr: rest` where addr is a resource address (no spaces).
fn progress_of(line: &str) -> Option<(&str, &str)> {
    let (addr, rest) = line.split_once(": ")?;
    if addr.is_empty() || addr.contains(' ') || !addr.contains('.') {
        return None;
    }
    Some((addr, rest))
}

fn is_progress(rest: &str) -> bool {
    rest.starts_with("Refreshing state...")
        || rest.starts_with("Reading...")
        || rest.starts_with("Read complete after ")
        || rest.starts_with("Still creating... [")
        || rest.starts_with("Still modifying... [")
        || rest.starts_with("Still destroying... [")
        || rest.starts_with("Still reading... [")
}

/// `Creating...` → the completion line it waits for.
fn completion_of(rest: &str) -> Option<&'static str> {
    if rest.starts_with("Creating...") {
        Some("Creation complete after ")
    } else if rest.starts_with("Modifying...") {
        Some("Modifications complete after ")
    } else if rest.starts_with("Destroying...") {
        Some("Destruction complete after ")
    } else {
        None
    }
}

pub fn format(doc: &Doc) -> Option<Vec<Piece>> {
    let lines = &doc.lines;
    if !lines.iter().any(|l| recognised(l)) {
        return None; // refuse to guess
    }
    let mut fold: Vec<(usize, &'static str)> = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let Some((addr, rest)) = progress_of(line) else {
            continue;
        };
        if is_progress(rest) {
            fold.push((n, "progress"));
        } else if let Some(done) = completion_of(rest) {
            let completed = lines[n + 1..]
                .iter()
                .any(|l| progress_of(l).is_some_and(|(a, r)| a == addr && r.starts_with(done)));
            // A 0.11 log lists the attributes under `Creating...`: that line heads them.
            let heads_attributes = lines.get(n + 1).is_some_and(|l| l.starts_with("  "));
            if completed && !heads_attributes {
                fold.push((n, "progress"));
            }
        }
    }
    unknown_attributes(lines, &mut fold);
    fold.retain(|&(n, _)| !is_fact(lines[n]));
    fold.sort_unstable();
    if fold.len() < 3 {
        return None;
    }
    let mut pieces = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut next = fold.iter().peekable();
    for n in 0..lines.len() {
        match next.peek() {
            Some(&&(f, what)) if f == n => {
                next.next();
                if !seen.contains(&what) {
                    seen.push(what);
                    pieces.push(Piece::Fold {
                        lines: fold.iter().filter(|x| x.1 == what).map(|x| x.0).collect(),
                        what: what.to_string(),
                    });
                }
            }
            _ => pieces.push(Piece::Keep(n)),
        }
    }
    Some(pieces)
}

/// The attribute lines whose value is not known yet, inside resources to be created: in the
/// plan renderer (`+ id = (known after apply)` under `# x will be created`) and in the 0.11
/// apply log (`  arn: "" => "<computed>"` under `x: Creating...`).
fn unknown_attributes(lines: &[&str], fold: &mut Vec<(usize, &'static str)>) {
    let mut in_created = false;
    let mut in_legacy_create = false;
    for (n, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if t.starts_with("# ") && !t.starts_with("# (") {
            in_created = t.ends_with(" will be created");
            in_legacy_create = false;
            continue;
        }
        if let Some((_, rest)) = progress_of(line) {
            in_legacy_create = rest.starts_with("Creating...");
            continue;
        }
        if line.trim().is_empty() && !in_created {
            in_legacy_create = false;
        }
        if in_created && t.starts_with("+ ") && t.ends_with("= (known after apply)") {
            fold.push((n, "(known after apply) attribute"));
        }
        if in_legacy_create
            && line.starts_with("  ")
            && t.ends_with(r#""" => "<computed>""#)
            && t.split_once(':').is_some_and(|(k, _)| !k.contains(' '))
        {
            fold.push((n, "(computed) attribute"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = include_str!("../../fixtures/terraform-plan-create/input.txt");
    const APPLY: &str = include_str!("../../fixtures/terraform-apply-s3-legacy/input.txt");

    fn run(text: &str) -> Option<String> {
        let doc = Doc::new("terraform plan", text);
        let pieces = format(&doc)?;
        Some(crate::fmt::render_checked(&doc, &pieces, "h"))
    }

    /// The plan fixture with refresh progress before it, as a plan against existing state
    /// prints (lines shaped like those of hashicorp/terraform's own renderer).
    fn plan_with_progress() -> String {
        let mut s = String::new();
        for i in 0..4 {
            s.push_str(&format!(
                "random_pet.p[{i}]: Refreshing state... [id=pet-{i}]\n"
            ));
        }
        s.push('\n');
        s.push_str(PLAN);
        s
    }

    #[test]
    fn labels() {
        assert!(matches(&Label::parse("terraform plan -out tf.plan")));
        assert!(matches(&Label::parse(
            "terraform -chdir=infra apply -auto-approve"
        )));
        assert!(matches(&Label::parse("tofu plan")));
        assert!(!matches(&Label::parse("terraform init")));
    }

    #[test]
    fn small_plan_is_left_alone() {
        // Two unknown attributes are too few to fold: nothing to gain.
        assert!(run(PLAN).is_none());
    }

    #[test]
    fn plan_folds_progress_and_keeps_headers_and_summary() {
        let out = run(&plan_with_progress()).unwrap();
        assert!(
            out.starts_with("[… 4 progress lines · sqz expand h:L1-4]\n"),
            "{out}"
        );
        assert!(out.contains("  # random_string.my_string will be created\n"));
        assert!(out.contains("      + length      = 11\n"));
        assert!(out.contains("Plan: 1 to add, 0 to change, 0 to destroy.\n"));
        assert!(out.contains("  + output_string = \"the_string\"\n"));
    }

    #[test]
    fn legacy_apply_folds_computed_attributes() {
        let out = run(APPLY).unwrap();
        assert!(out.contains("aws_s3_bucket.default: Creating...\n"));
        assert!(out.contains(r#"  bucket:                      "" => "codefresh-gitops-example""#));
        assert!(out.contains("aws_s3_bucket.default: Creation complete after 6s"));
        assert!(out.contains("Apply complete! Resources: 1 added, 0 changed, 0 destroyed.\n"));
        assert!(!out.contains("acceleration_status"));
        assert!(out.contains("10 (computed) attribute lines"), "{out}");
    }

    #[test]
    fn bad_input() {
        // Truncated mid-line before the summary: still a plan; the cut line stays.
        let text = plan_with_progress();
        let cut = &text[..text.find("      + upper").unwrap() + 9];
        let out = run(cut).unwrap();
        assert!(out.trim_end().ends_with("      + u"), "{out}");
        // Cut before any terraform shape appears: refused.
        assert!(
            run("random_pet.p[0]: Refreshing state... [id=pet-0]\nrandom_pet.p[1]: Refr").is_none()
        );
        // Interleaved apply of parallel resources: a resource that never completed keeps its
        // `Creating...` line, and its error block stays.
        let parallel = "aws_s3_bucket.a: Creating...\naws_s3_bucket.b: Creating...\naws_s3_bucket.a: Still creating... [10s elapsed]\naws_s3_bucket.b: Still creating... [10s elapsed]\naws_s3_bucket.a: Creation complete after 12s [id=a]\n╷\n│ Error: creating S3 Bucket (b): BucketAlreadyExists\n│ \n│   with aws_s3_bucket.b,\n│   on main.tf line 9, in resource \"aws_s3_bucket\" \"b\":\n╵\nApply complete! Resources: 1 added, 0 changed, 0 destroyed.\n";
        let out = run(parallel).unwrap();
        assert!(out.contains("aws_s3_bucket.b: Creating...\n"));
        assert!(!out.contains("aws_s3_bucket.a: Creating..."));
        assert!(out.contains("│ Error: creating S3 Bucket (b): BucketAlreadyExists\n"));
        assert!(out.contains("│   on main.tf line 9"));
        // An unknown line from a newer version stays.
        let newer = plan_with_progress().replacen(
            "Plan: 1 to add",
            "  # random_string.x will be imported\nPlan: 1 to add",
            1,
        );
        assert!(run(&newer)
            .unwrap()
            .contains("  # random_string.x will be imported\n"));
        // Another locale (terraform is not translated; a translated summary is not recognised).
        assert!(run("Plan : 1 à ajouter, 0 à modifier, 0 à détruire.\n").is_none());
    }
}
