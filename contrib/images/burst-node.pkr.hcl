# contrib/images/burst-node.pkr.hcl - a burst node AMI from Debian 12's own
# (doc/admin-guide.md, "A node image"). Not run by the project's tests (it
# needs an AWS account); its provisioning script is (tests/packaging/
# test_image.sh). With the .debs in ./debs and the cluster's files beside it:
#
#   packer init burst-node.pkr.hcl
#   packer build -var region=eu-west-1 -var subnet_id=subnet-... \
#     -var munge_key=/etc/munge/munge.key -var slurm_conf=/etc/slurm/slurm.conf \
#     burst-node.pkr.hcl
#
# The AMI holds the munge key: share it with no other account, and give the
# image's id to burst.conf's ImageId= (doc/aws.md).
packer {
  required_plugins {
    amazon = {
      source  = "github.com/hashicorp/amazon"
      version = ">= 1.2.0"
    }
  }
}

variable "region" {
  type = string
}

variable "subnet_id" {
  type        = string
  description = "a subnet with a way out (apt), where the build instance runs"
}

variable "instance_type" {
  type    = string
  default = "t3.small"
}

variable "debs" {
  type        = string
  default     = "debs"
  description = "the directory of slurm-burst's .debs (common, node, spank)"
}

variable "munge_key" {
  type        = string
  description = "the cluster's munge key"
}

variable "slurm_conf" {
  type        = string
  default     = ""
  description = "the cluster's slurm.conf; empty for configless Slurm"
}

variable "extra_packages" {
  type        = string
  default     = ""
  description = "more Debian packages: drivers, the acceptance suite's runtime"
}

locals {
  stamp = formatdate("YYYYMMDD-hhmm", timestamp())
}

source "amazon-ebs" "burst_node" {
  region        = var.region
  instance_type = var.instance_type
  subnet_id     = var.subnet_id
  ssh_username  = "admin"
  ami_name      = "slurm-burst-node-${local.stamp}"
  # Debian 12's own AMIs (the Debian cloud team's account)
  source_ami_filter {
    filters = {
      name                = "debian-12-amd64-*"
      virtualization-type = "hvm"
      root-device-type    = "ebs"
    }
    owners      = ["136693071363"]
    most_recent = true
  }
  # IMDSv2 only, as the agent launches the nodes
  metadata_options {
    http_endpoint               = "enabled"
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }
  tags = {
    Name           = "slurm-burst-node-${local.stamp}"
    "burst:image"  = "node"
  }
}

build {
  sources = ["source.amazon-ebs.burst_node"]

  provisioner "shell" {
    inline = ["mkdir -p /tmp/slurm-burst/debs"]
  }
  provisioner "file" {
    source      = "${var.debs}/"
    destination = "/tmp/slurm-burst/debs"
  }
  provisioner "file" {
    source      = var.munge_key
    destination = "/tmp/slurm-burst/munge.key"
  }
  provisioner "file" {
    # slurm.conf, or an empty file when configless
    content     = var.slurm_conf == "" ? "" : file(var.slurm_conf)
    destination = "/tmp/slurm-burst/slurm.conf"
  }
  provisioner "file" {
    source      = "provision-node.sh"
    destination = "/tmp/slurm-burst/provision-node.sh"
  }
  provisioner "shell" {
    execute_command = "sudo -E sh '{{ .Path }}'"
    environment_vars = [
      "MUNGE_KEY_FILE=/tmp/slurm-burst/munge.key",
      "EXTRA_PACKAGES=${var.extra_packages}",
    ]
    inline = [
      "if [ -s /tmp/slurm-burst/slurm.conf ]; then export SLURM_CONF_FILE=/tmp/slurm-burst/slurm.conf; fi",
      "sh /tmp/slurm-burst/provision-node.sh /tmp/slurm-burst/debs",
      # the key leaves with the build's files; the image keeps its installed copy
      "shred -u /tmp/slurm-burst/munge.key",
      "rm -rf /tmp/slurm-burst",
      # the image's instances run cloud-init afresh (the agent's user data)
      "cloud-init clean --logs",
    ]
  }
}
