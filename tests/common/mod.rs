//! Helpers shared by the end-to-end tests.

use std::process::Command as StdCommand;

/// Make sure the partition's device node exists (no udev in minimal containers): ask the
/// kernel to add the partition, then create the node from sysfs if needed; removed on drop
/// only if this test created it.
pub struct PartitionNode {
    created: Option<String>,
}

impl PartitionNode {
    pub fn create(disk: &str, part: &str) -> Option<PartitionNode> {
        let _ = StdCommand::new("partx")
            .args(["-a", disk])
            .stderr(std::process::Stdio::null())
            .status();
        let name = part.trim_start_matches("/dev/");
        let sys = format!("/sys/class/block/{name}/dev");
        let mut dev = None;
        for _ in 0..100 {
            if let Ok(d) = std::fs::read_to_string(&sys) {
                dev = Some(d.trim().to_string());
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let dev = dev?;
        if std::path::Path::new(part).exists() {
            return Some(PartitionNode { created: None });
        }
        let (maj, min) = dev.split_once(':')?;
        let ok = StdCommand::new("mknod")
            .args([part, "b", maj, min])
            .status()
            .ok()?
            .success();
        ok.then(|| PartitionNode {
            created: Some(part.to_string()),
        })
    }
}

impl Drop for PartitionNode {
    fn drop(&mut self) {
        if let Some(p) = &self.created {
            let _ = std::fs::remove_file(p);
        }
    }
}
