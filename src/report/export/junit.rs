//! JUnit XML (through `quick-junit`): one `<testsuite>` per command run, one `<testcase>`
//! per check, its figure as the `measurement` and `units` properties and in
//! `<system-out>`, a failed check as `<failure message="...">`, one that could not decide
//! as `<error message="...">`. The suite's properties
//! carry the device's labels.

use super::{device_labels, Exporter};
use crate::report::Document;
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use std::io::{self, Write};
use std::time::Duration;

/// The JUnit exporter.
pub struct Junit;

impl Exporter for Junit {
    fn write(&self, doc: &Document, out: &mut dyn Write) -> io::Result<()> {
        let mut suite = TestSuite::new(format!("flashscope {}", doc.command()));
        suite.set_time(Duration::from_nanos(doc.elapsed_ns));
        for (k, v) in device_labels(doc) {
            suite.add_property(Property::new(k, v));
        }
        for c in &doc.checks {
            let status = if c.inconclusive {
                // Neither a pass nor the device's failure: the check could not decide.
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                s.set_message(c.message.as_str());
                s.set_type("check could not decide");
                s
            } else if c.passed {
                TestCaseStatus::success()
            } else {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(c.message.as_str());
                s.set_type("device failed the check");
                s
            };
            let mut case = TestCase::new(c.name.as_str(), status);
            case.set_classname(format!("flashscope.{}", doc.command()));
            let mut out_text = c.message.clone();
            if let Some(m) = c.measurement {
                let units = c.units.as_deref().unwrap_or("");
                case.add_property(Property::new("measurement", m.to_string()));
                case.add_property(Property::new("units", units));
                out_text.push_str(&format!("\nmeasurement: {m} {units}"));
            }
            case.set_system_out(out_text);
            suite.add_test_case(case);
        }
        let mut report = Report::new("flashscope");
        report.add_test_suite(suite);
        report.serialize(out).map_err(io::Error::other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::export::tests::sample_doc;

    #[test]
    fn one_case_per_check_with_its_figure_and_failure() {
        let mut out = Vec::new();
        Junit.write(&sample_doc(), &mut out).unwrap();
        let xml = String::from_utf8(out).unwrap();
        assert!(
            xml.contains(r#"<testsuite name="flashscope probe" tests="2""#),
            "{xml}"
        );
        assert!(xml.contains(r#"failures="1""#), "{xml}");
        assert!(xml.contains(r#"<testcase name="probe.capacity""#), "{xml}");
        assert!(xml.contains("holds 8 GiB &lt;&amp;&gt;"), "{xml}");
        assert!(
            xml.contains(r#"<property name="measurement" value="8000000000"/>"#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<property name="serial" value="0x1234"/>"#),
            "{xml}"
        );
    }

    #[test]
    fn a_check_that_could_not_decide_is_an_error_not_a_pass() {
        let mut doc = sample_doc();
        doc.checks[1] = doc.checks[1].clone().undecided_if(true);
        let mut out = Vec::new();
        Junit.write(&doc, &mut out).unwrap();
        let xml = String::from_utf8(out).unwrap();
        assert!(xml.contains(r#"errors="1""#), "{xml}");
        assert!(xml.contains(r#"failures="1""#), "{xml}");
        assert!(xml.contains(r#"type="check could not decide""#), "{xml}");
    }
}
